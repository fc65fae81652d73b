// Validating GGUF v2/v3 parser. Every read goes through ByteCursor, which
// checks the remaining length first and decodes little-endian byte by byte,
// so hostile input can neither read out of bounds nor hit undefined
// behaviour (the fuzzer runs this under ASan + UBSan).
#include <bit>
#include <limits>
#include <string>

#include "gguf/gguf.h"
#include "gguf/gguf_format.h"
#include "gguf/mapped_file.h"

namespace powerinfer::gguf {
namespace {

using namespace detail;

constexpr std::string_view kHintTruncated = "the file is truncated; download it again";
constexpr std::string_view kHintCorrupt =
    "the file is corrupt or not a GGUF model; download it again or reconvert it";
constexpr std::string_view kHintTruncatedOrCorrupt =
    "the file is truncated or corrupt; download it again";

class ByteCursor {
public:
    ByteCursor(std::span<const uint8_t> bytes, std::string_view name)
        : bytes_(bytes), name_(name) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return bytes_.size(); }
    uint64_t remaining() const { return bytes_.size() - pos_; }

    [[noreturn]] void fail(uint64_t offset, const std::string& problem,
                           std::string_view hint = {}) const {
        std::string msg =
            std::string(name_) + ": " + problem + " at offset " + std::to_string(offset);
        if (!hint.empty()) msg += " — " + std::string(hint);
        throw GgufError(msg);
    }

    void need(uint64_t n, std::string_view what) const {
        if (n > remaining()) {
            fail(pos_,
                 "unexpected end of file reading " + std::string(what) + " (need " +
                     std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left)",
                 kHintTruncated);
        }
    }

    uint64_t uint(int width, std::string_view what) {
        need(static_cast<uint64_t>(width), what);
        uint64_t x = 0;
        for (int i = 0; i < width; ++i) x |= uint64_t{bytes_[pos_ + i]} << (8 * i);
        pos_ += static_cast<uint64_t>(width);
        return x;
    }
    uint8_t u8(std::string_view what) { return static_cast<uint8_t>(uint(1, what)); }
    uint32_t u32(std::string_view what) { return static_cast<uint32_t>(uint(4, what)); }
    uint64_t u64(std::string_view what) { return uint(8, what); }

    std::string str(std::string_view what) {
        const uint64_t at = pos_;
        const uint64_t len = u64(what);
        if (len > remaining()) {
            fail(at,
                 std::string(what) + " length " + std::to_string(len) + " exceeds the " +
                     std::to_string(remaining()) + " bytes left in the file",
                 kHintTruncatedOrCorrupt);
        }
        std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_),
                      static_cast<size_t>(len));
        pos_ += len;
        return s;
    }

private:
    std::span<const uint8_t> bytes_;
    std::string_view name_;
    uint64_t pos_ = 0;
};

std::string printable(std::string_view s) {
    // Keys and names come from the file: keep messages printable and short.
    std::string out = "'";
    for (char c : s.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    if (s.size() > 80) out += "...";
    return out + "'";
}

bool checked_mul(uint64_t a, uint64_t b, uint64_t& out) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
    out = a * b;
    return true;
}

class Parser {
public:
    Parser(std::span<const uint8_t> bytes, std::string_view name) : c_(bytes, name) {}

    Value value(uint32_t type, uint64_t type_at, std::string_view key, int depth) {
        switch (static_cast<ValueType>(type)) {
            case ValueType::UINT8:
                return {ValueType::UINT8, c_.uint(1, "a uint8 value")};
            case ValueType::UINT16:
                return {ValueType::UINT16, c_.uint(2, "a uint16 value")};
            case ValueType::UINT32:
                return {ValueType::UINT32, c_.uint(4, "a uint32 value")};
            case ValueType::UINT64:
                return {ValueType::UINT64, c_.uint(8, "a uint64 value")};
            case ValueType::INT8:
                return {ValueType::INT8, int64_t{static_cast<int8_t>(c_.uint(1, "an int8 value"))}};
            case ValueType::INT16:
                return {ValueType::INT16,
                        int64_t{static_cast<int16_t>(c_.uint(2, "an int16 value"))}};
            case ValueType::INT32:
                return {ValueType::INT32,
                        int64_t{static_cast<int32_t>(c_.uint(4, "an int32 value"))}};
            case ValueType::INT64:
                return {ValueType::INT64, static_cast<int64_t>(c_.uint(8, "an int64 value"))};
            case ValueType::FLOAT32:
                return {ValueType::FLOAT32,
                        double{std::bit_cast<float>(c_.u32("a float32 value"))}};
            case ValueType::FLOAT64:
                return {ValueType::FLOAT64, std::bit_cast<double>(c_.u64("a float64 value"))};
            case ValueType::BOOL:
                // The spec says 0 or 1; writers only produce those, and
                // reading any nonzero byte as true is what llama.cpp does.
                return {ValueType::BOOL, c_.u8("a bool value") != 0};
            case ValueType::STRING:
                return {ValueType::STRING, c_.str("string value")};
            case ValueType::ARRAY:
                return array(key, depth);
        }
        c_.fail(type_at,
                "unknown value type " + std::to_string(type) + " for key " + printable(key),
                kHintCorrupt);
    }

    Value array(std::string_view key, int depth) {
        const uint64_t at = c_.pos();
        if (depth >= kMaxArrayDepth) {
            c_.fail(at,
                    "arrays nested deeper than " + std::to_string(kMaxArrayDepth) +
                        " levels in key " + printable(key),
                    kHintCorrupt);
        }
        const uint32_t elem = c_.u32("an array element type");
        if (elem > kMaxValueType) {
            c_.fail(
                at,
                "unknown array element type " + std::to_string(elem) + " for key " + printable(key),
                kHintCorrupt);
        }
        const uint64_t len_at = c_.pos();
        const uint64_t len = c_.u64("an array length");
        // Each element needs at least min_value_bytes, so a length the rest
        // of the file cannot hold is rejected before allocating anything.
        if (len > c_.remaining() / min_value_bytes(elem)) {
            c_.fail(len_at,
                    "array length " + std::to_string(len) + " for key " + printable(key) +
                        " does not fit in the " + std::to_string(c_.remaining()) +
                        " bytes left in the file",
                    kHintTruncatedOrCorrupt);
        }
        if (len > kMaxMetadataItems - items_) {
            c_.fail(len_at,
                    "metadata arrays hold more than " + std::to_string(kMaxMetadataItems) +
                        " elements in total (key " + printable(key) + ")",
                    kHintCorrupt);
        }
        items_ += len;
        Array a;
        a.elem_type = static_cast<ValueType>(elem);
        a.items.reserve(capped_reserve(len));
        for (uint64_t i = 0; i < len; ++i) a.items.push_back(value(elem, at, key, depth + 1));
        return {ValueType::ARRAY, std::move(a)};
    }

    ByteCursor c_;
    uint64_t items_ = 0;
};

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::filesystem::path& path) {
    std::unique_ptr<GgufFile> f(new GgufFile);
    f->path_ = path;
    f->mapping_ = MappedFile::open(path);
    f->bytes_ = f->mapping_->bytes();
    f->parse(display_path(path));
    return f;
}

std::unique_ptr<GgufFile> GgufFile::from_memory(std::span<const uint8_t> bytes,
                                                std::string display_name) {
    std::unique_ptr<GgufFile> f(new GgufFile);
    f->bytes_ = bytes;
    f->parse(display_name);
    return f;
}

GgufFile::~GgufFile() = default;

void GgufFile::parse(std::string_view name) {
    if (bytes_.empty())
        throw GgufError(std::string(name) + ": the file is empty (0 bytes) — download it again");

    Parser p(bytes_, name);
    ByteCursor& c = p.c_;

    // Header.
    if (c.u32("the GGUF magic") != kMagic) {
        std::string magic;
        for (size_t i = 0; i < 4; ++i) {
            const auto b = bytes_[i];
            magic += (b >= 0x20 && b < 0x7f) ? static_cast<char>(b) : '?';
        }
        c.fail(0, "not a GGUF file (magic is '" + magic + "', expected 'GGUF')",
               "pick a .gguf model file");
    }
    version_ = c.u32("the GGUF version");
    if (version_ == 1) {
        c.fail(4, "GGUF version 1 is not supported",
               "reconvert the model with a current llama.cpp (v2 and v3 are supported)");
    }
    if (version_ != 2 && version_ != 3) {
        const uint32_t swapped = (version_ >> 24) | ((version_ >> 8) & 0xff00u) |
                                 ((version_ << 8) & 0xff0000u) | (version_ << 24);
        if (swapped == 2 || swapped == 3) {
            c.fail(4, "big-endian GGUF files are not supported",
                   "use the little-endian build of this model");
        }
        c.fail(4, "unsupported GGUF version " + std::to_string(version_),
               "this build reads versions 2 and 3; update PowerInfer or reconvert the model");
    }
    const uint64_t n_tensors_at = c.pos();
    const uint64_t n_tensors = c.u64("the tensor count");
    const uint64_t n_kv_at = c.pos();
    const uint64_t n_kv = c.u64("the metadata count");
    if (n_kv > c.remaining() / kMinKvBytes) {
        c.fail(n_kv_at,
               "metadata count " + std::to_string(n_kv) + " is impossible for a " +
                   std::to_string(c.size()) + "-byte file (each entry needs at least " +
                   std::to_string(kMinKvBytes) + " bytes)",
               kHintTruncatedOrCorrupt);
    }

    // Metadata.
    uint64_t alignment_value_at = 0;
    kv_.reserve(capped_reserve(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
        const uint64_t key_at = c.pos();
        std::string key = c.str("metadata key");
        if (kv_index_.count(key))
            c.fail(key_at, "duplicate metadata key " + printable(key), kHintCorrupt);
        const uint64_t type_at = c.pos();
        const uint32_t type = c.u32("a value type");
        if (key == "general.alignment") alignment_value_at = c.pos();
        Value v = p.value(type, type_at, key, 0);
        kv_index_.emplace(key, kv_.size());
        kv_.emplace_back(std::move(key), std::move(v));
    }
    if (const Value* a = find("general.alignment")) {
        const auto x = a->as_uint();
        if (!x || *x == 0 || !std::has_single_bit(*x) || *x > (uint64_t{1} << 30)) {
            c.fail(alignment_value_at,
                   "general.alignment must be a power of two between 1 and 2^30", kHintCorrupt);
        }
        alignment_ = *x;
    }

    // Tensor infos. Data ranges are checked once the data section is known.
    if (n_tensors > c.remaining() / kMinTensorInfoBytes) {
        c.fail(n_tensors_at,
               "tensor count " + std::to_string(n_tensors) + " does not fit in the " +
                   std::to_string(c.remaining()) +
                   " bytes after the metadata (each tensor needs at least " +
                   std::to_string(kMinTensorInfoBytes) + " bytes)",
               kHintTruncatedOrCorrupt);
    }
    std::vector<uint64_t> info_at;
    tensors_.reserve(capped_reserve(n_tensors));
    info_at.reserve(capped_reserve(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        const uint64_t at = c.pos();
        TensorInfo t;
        t.name = c.str("tensor name");
        if (tensor_index_.count(t.name))
            c.fail(at, "duplicate tensor name " + printable(t.name), kHintCorrupt);
        const uint64_t dims_at = c.pos();
        const uint32_t n_dims = c.u32("the tensor's dimension count");
        if (n_dims < 1 || n_dims > kMaxDims) {
            c.fail(dims_at,
                   "tensor " + printable(t.name) + " has " + std::to_string(n_dims) +
                       " dimensions (1 to " + std::to_string(kMaxDims) + " are allowed)",
                   kHintCorrupt);
        }
        t.shape.resize(n_dims);
        uint64_t n_elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t dim_at = c.pos();
            t.shape[d] = c.u64("a tensor dimension");
            // ggml keeps dims as int64; llama.cpp rejects negative ones and
            // accepts empty (0) ones, and so do we.
            constexpr auto kMaxElems = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
            if (!checked_mul(n_elements, t.shape[d], n_elements) || n_elements > kMaxElems) {
                c.fail(dim_at,
                       "tensor " + printable(t.name) + " has too many elements (shape overflows)",
                       kHintCorrupt);
            }
        }
        const uint64_t type_at = c.pos();
        const uint32_t type = c.u32("the tensor type");
        const auto traits = ggml_type_traits(type);
        if (!traits) {
            c.fail(type_at,
                   "tensor " + printable(t.name) + " has unknown type id " + std::to_string(type),
                   "the model uses a quantization this build does not know; update "
                   "PowerInfer or pick another quantization of the model");
        }
        t.type = static_cast<GgmlType>(type);
        if (t.shape[0] % traits->block_elems != 0) {
            c.fail(dims_at,
                   "tensor " + printable(t.name) + " row of " + std::to_string(t.shape[0]) +
                       " elements is not a multiple of the " + std::string(traits->name) +
                       " block size " + std::to_string(traits->block_elems),
                   kHintCorrupt);
        }
        const auto row = ggml_row_bytes(t.type, t.shape[0]);
        if (!row)
            c.fail(dims_at, "tensor " + printable(t.name) + " byte size overflows", kHintCorrupt);
        uint64_t n_bytes = *row;
        for (uint32_t d = 1; d < n_dims; ++d) {
            if (!checked_mul(n_bytes, t.shape[d], n_bytes))
                c.fail(dims_at, "tensor " + printable(t.name) + " byte size overflows",
                       kHintCorrupt);
        }
        t.n_elements = n_elements;
        t.n_bytes = n_bytes;
        const uint64_t offset_at = c.pos();
        t.offset = c.u64("the tensor data offset");
        if (t.offset % alignment_ != 0) {
            c.fail(offset_at,
                   "tensor " + printable(t.name) + " data offset " + std::to_string(t.offset) +
                       " is not a multiple of the alignment " + std::to_string(alignment_),
                   kHintCorrupt);
        }
        tensor_index_.emplace(t.name, tensors_.size());
        tensors_.push_back(std::move(t));
        info_at.push_back(offset_at);
    }

    // The data section starts at the next multiple of the alignment; the
    // padding need not exist when there are no tensors.
    const uint64_t end_of_infos = c.pos();
    data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
    if (!tensors_.empty() && data_offset_ > c.size()) {
        c.fail(end_of_infos,
               "the tensor data section (aligned start " + std::to_string(data_offset_) +
                   ") lies past the end of the " + std::to_string(c.size()) + "-byte file",
               kHintTruncated);
    }
    const uint64_t data_size = tensors_.empty() ? 0 : c.size() - data_offset_;
    for (size_t i = 0; i < tensors_.size(); ++i) {
        TensorInfo& t = tensors_[i];
        if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
            c.fail(info_at[i],
                   "tensor " + printable(t.name) + " data (" + std::to_string(t.n_bytes) +
                       " bytes at data offset " + std::to_string(t.offset) +
                       ") extends past the end of the " + std::to_string(c.size()) + "-byte file",
                   kHintTruncated);
        }
        t.data = bytes_.data() + data_offset_ + t.offset;
    }
}

const Value* GgufFile::find(std::string_view key) const {
    const auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->as_int() : std::nullopt;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->as_float() : std::nullopt;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->as_bool() : std::nullopt;
}

std::optional<std::string> GgufFile::get_string(std::string_view key) const {
    const Value* v = find(key);
    const std::string* s = v ? v->as_string() : nullptr;
    return s ? std::optional<std::string>(*s) : std::nullopt;
}

namespace {

// Converts every element with `get`; empty if the key is absent, not an
// array, or any element does not convert.
template <typename T, typename Get>
std::vector<T> convert_array(const Value* v, Get get) {
    const Array* a = v ? v->as_array() : nullptr;
    if (!a) return {};
    std::vector<T> out;
    out.reserve(a->items.size());
    for (const Value& item : a->items) {
        auto x = get(item);
        if (!x) return {};
        out.push_back(static_cast<T>(*x));
    }
    return out;
}

}  // namespace

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
    return convert_array<std::string>(find(key), [](const Value& v) { return v.as_string(); });
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
    return convert_array<float>(find(key), [](const Value& v) { return v.as_float(); });
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
    return convert_array<int64_t>(find(key), [](const Value& v) { return v.as_int(); });
}

const TensorInfo* GgufFile::tensor(std::string_view name) const {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GgufFile::release_pages(const uint8_t* p, size_t n) const {
    if (mapping_) MappedFile::release_pages(p, n);
}

}  // namespace powerinfer::gguf
