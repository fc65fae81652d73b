// GGUF v3 writer. Everything it accepts is checked against the same limits
// the reader enforces, so a written file always reads back.
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "gguf/gguf.h"
#include "gguf/gguf_format.h"

namespace powerinfer::gguf {
namespace {

using namespace detail;

[[noreturn]] void fail(const std::string& problem) { throw GgufError("GGUF writer: " + problem); }

class ByteSink {
public:
    explicit ByteSink(std::vector<uint8_t>& out) : out_(out) {}

    void uint(uint64_t x, int width) {
        for (int i = 0; i < width; ++i) out_.push_back(static_cast<uint8_t>(x >> (8 * i)));
    }
    void str(std::string_view s) {
        uint(s.size(), 8);
        out_.insert(out_.end(), s.begin(), s.end());
    }

private:
    std::vector<uint8_t>& out_;
};

int int_width(ValueType t) {
    switch (t) {
        case ValueType::UINT8:
        case ValueType::INT8:
            return 1;
        case ValueType::UINT16:
        case ValueType::INT16:
            return 2;
        case ValueType::UINT32:
        case ValueType::INT32:
            return 4;
        case ValueType::UINT64:
        case ValueType::INT64:
            return 8;
        default:
            return 0;
    }
}

bool is_signed(ValueType t) {
    return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 ||
           t == ValueType::INT64;
}

// Encodes the payload of `v` (not its type id); throws if the variant does not
// match the declared type or the value does not fit it.
void encode(ByteSink& out, const Value& v, std::string_view key, int depth) {
    const auto mismatch = [&] {
        fail("value of key '" + std::string(key) + "' does not hold a " +
             std::string(value_type_name(v.type)));
    };
    if (const int width = int_width(v.type)) {
        const int bits = 8 * width;
        if (is_signed(v.type)) {
            const auto* x = std::get_if<int64_t>(&v.v);
            if (!x) mismatch();
            const int64_t lo =
                bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
            const int64_t hi =
                bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
            if (*x < lo || *x > hi) fail("value of key '" + std::string(key) + "' is out of range");
            out.uint(static_cast<uint64_t>(*x), width);
        } else {
            const auto* x = std::get_if<uint64_t>(&v.v);
            if (!x) mismatch();
            if (bits < 64 && *x >> bits)
                fail("value of key '" + std::string(key) + "' is out of range");
            out.uint(*x, width);
        }
        return;
    }
    switch (v.type) {
        case ValueType::FLOAT32:
        case ValueType::FLOAT64: {
            const auto* x = std::get_if<double>(&v.v);
            if (!x) mismatch();
            if (v.type == ValueType::FLOAT32)
                out.uint(std::bit_cast<uint32_t>(static_cast<float>(*x)), 4);
            else
                out.uint(std::bit_cast<uint64_t>(*x), 8);
            return;
        }
        case ValueType::BOOL: {
            const auto* x = std::get_if<bool>(&v.v);
            if (!x) mismatch();
            out.uint(*x ? 1 : 0, 1);
            return;
        }
        case ValueType::STRING: {
            const auto* x = std::get_if<std::string>(&v.v);
            if (!x) mismatch();
            out.str(*x);
            return;
        }
        case ValueType::ARRAY: {
            const auto* a = std::get_if<Array>(&v.v);
            if (!a) mismatch();
            if (depth >= kMaxArrayDepth)
                fail("arrays in key '" + std::string(key) + "' are nested too deeply");
            if (static_cast<uint32_t>(a->elem_type) > kMaxValueType)
                fail("array of key '" + std::string(key) + "' has an unknown element type");
            out.uint(static_cast<uint32_t>(a->elem_type), 4);
            out.uint(a->items.size(), 8);
            for (const Value& item : a->items) {
                if (item.type != a->elem_type)
                    fail("array of key '" + std::string(key) + "' mixes element types");
                encode(out, item, key, depth + 1);
            }
            return;
        }
        default:
            fail("key '" + std::string(key) + "' has an unknown value type");
    }
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

void GgufWriter::set(std::string key, Value value) {
    // The alignment is a property of the layout, so it has one source of truth.
    if (key == "general.alignment") {
        const auto a = value.as_uint();
        if (!a) fail("general.alignment must be an integer");
        set_alignment(*a);
        return;
    }
    for (auto& [k, v] : kv_) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    kv_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::add_tensor(std::string name, GgmlType type, std::vector<uint64_t> shape,
                            std::vector<uint8_t> data) {
    for (const auto& t : tensors_)
        if (t.name == name) fail("duplicate tensor name '" + name + "'");
    if (shape.empty() || shape.size() > kMaxDims)
        fail("tensor '" + name + "' must have 1 to 4 dimensions");
    if (!ggml_type_traits(static_cast<uint32_t>(type)))
        fail("tensor '" + name + "' has an unknown type");
    auto bytes = ggml_row_bytes(type, shape[0]);
    if (!bytes) fail("tensor '" + name + "' row length is not a multiple of the block size");
    uint64_t n_elements = shape[0];
    for (size_t d = 1; d < shape.size(); ++d) {
        const uint64_t limit = std::numeric_limits<int64_t>::max();
        if (shape[d] != 0 && (*bytes > std::numeric_limits<uint64_t>::max() / shape[d] ||
                              n_elements > limit / shape[d]))
            fail("tensor '" + name + "' shape overflows");
        *bytes *= shape[d];
        n_elements *= shape[d];
    }
    if (*bytes != data.size()) {
        fail("tensor '" + name + "' needs " + std::to_string(*bytes) + " bytes of data, got " +
             std::to_string(data.size()));
    }
    tensors_.push_back({std::move(name), type, std::move(shape), std::move(data)});
}

void GgufWriter::set_alignment(uint64_t a) {
    if (a == 0 || !std::has_single_bit(a) || a > (uint64_t{1} << 30))
        fail("alignment " + std::to_string(a) + " is not a power of two between 1 and 2^30");
    alignment_ = a;
}

namespace {

// Header, metadata, tensor infos and the padding up to the data section.
std::vector<uint8_t> encode_head(const std::vector<std::pair<std::string, Value>>& kv,
                                 uint64_t alignment, const auto& tensors,
                                 std::vector<uint64_t>& offsets) {
    std::vector<uint8_t> head;
    ByteSink out(head);
    out.uint(kMagic, 4);
    out.uint(kVersion, 4);
    out.uint(tensors.size(), 8);
    const bool write_alignment = alignment != kDefaultAlignment;
    out.uint(kv.size() + (write_alignment ? 1 : 0), 8);
    for (const auto& [key, value] : kv) {
        out.str(key);
        out.uint(static_cast<uint32_t>(value.type), 4);
        encode(out, value, key, 0);
    }
    if (write_alignment) {
        out.str("general.alignment");
        out.uint(static_cast<uint32_t>(ValueType::UINT32), 4);
        out.uint(alignment, 4);
    }
    uint64_t offset = 0;
    offsets.clear();
    for (const auto& t : tensors) {
        out.str(t.name);
        out.uint(t.shape.size(), 4);
        for (uint64_t d : t.shape) out.uint(d, 8);
        out.uint(static_cast<uint32_t>(t.type), 4);
        out.uint(offset, 8);
        offsets.push_back(offset);
        offset = align_up(offset + t.data.size(), alignment);
    }
    head.resize(static_cast<size_t>(align_up(head.size(), alignment)), 0);
    return head;
}

}  // namespace

std::vector<uint8_t> GgufWriter::to_bytes() const {
    std::vector<uint64_t> offsets;
    std::vector<uint8_t> out = encode_head(kv_, alignment_, tensors_, offsets);
    const size_t data_start = out.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
        out.resize(data_start + offsets[i], 0);
        out.insert(out.end(), tensors_[i].data.begin(), tensors_[i].data.end());
    }
    out.resize(static_cast<size_t>(align_up(out.size(), alignment_)), 0);
    return out;
}

void GgufWriter::write(const std::filesystem::path& path) const {
    std::vector<uint64_t> offsets;
    const std::vector<uint8_t> head = encode_head(kv_, alignment_, tensors_, offsets);

    // Readers see either the old file or the complete new one, never a
    // partial write: write a sibling temp file, then rename over the target.
    std::random_device rd;
    auto tmp = path;
    tmp += ".tmp-" + std::to_string(rd());
    const auto io_fail = [&](const std::string& what) {
        std::error_code ec;
        std::filesystem::remove(tmp, ec);
        throw GgufError(display_path(path) + ": " + what +
                        " — check that the folder exists, is writable and has free space");
    };
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) io_fail("cannot create the file");
        const auto put = [&](const void* p, size_t n) {
            f.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
        };
        put(head.data(), head.size());
        const std::vector<uint8_t> zeros(static_cast<size_t>(alignment_), 0);
        uint64_t pos = 0;
        for (size_t i = 0; i < tensors_.size(); ++i) {
            put(zeros.data(), static_cast<size_t>(offsets[i] - pos));
            put(tensors_[i].data.data(), tensors_[i].data.size());
            pos = offsets[i] + tensors_[i].data.size();
        }
        put(zeros.data(), static_cast<size_t>(align_up(pos, alignment_) - pos));
        f.close();
        if (!f) io_fail("writing failed");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) io_fail("cannot replace the file (" + ec.message() + ")");
}

}  // namespace powerinfer::gguf
