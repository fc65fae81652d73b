// GGUF v2/v3: a validating, mmap-backed reader and a writer.
//
// The reader checks everything before use (magic, version, counts against the
// file size, string/array lengths, shape x type-size overflow, alignment,
// tensor data inside the file, dims <= 4, known types). A bad file throws
// GgufError whose message names the problem and the byte offset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/error.h"
#include "common/ggml_types.h"

namespace powerinfer::gguf {

class GgufError : public EngineError {
public:
    using EngineError::EngineError;
};

// GGUF metadata value type ids (gguf_type in the spec).
enum class ValueType : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
};

struct Value;
// Arrays keep their element type so that an empty array still has one, and so
// that a writer can round-trip them.
struct Array {
    ValueType elem_type = ValueType::UINT8;
    std::vector<Value> items;

    bool operator==(const Array&) const = default;
};

// "uint8", "string", "array", ...; "unknown" for ids outside the enum.
std::string_view value_type_name(ValueType t);

struct Value {
    ValueType type = ValueType::UINT8;
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> v;

    // Typed views; nullopt if the value has another kind. Integer accessors
    // accept any integer type whose value fits.
    std::optional<int64_t> as_int() const;
    std::optional<uint64_t> as_uint() const;
    std::optional<double> as_float() const;  // floats and integers
    std::optional<bool> as_bool() const;
    const std::string* as_string() const;
    const Array* as_array() const;

    static Value u8(uint8_t x);
    static Value i8(int8_t x);
    static Value u16(uint16_t x);
    static Value i16(int16_t x);
    static Value u32(uint32_t x);
    static Value i32(int32_t x);
    static Value u64(uint64_t x);
    static Value i64(int64_t x);
    static Value f32(float x);
    static Value f64(double x);
    static Value boolean(bool x);
    static Value str(std::string s);
    static Value array(ValueType elem, std::vector<Value> items);

    bool operator==(const Value&) const = default;
};

struct TensorInfo {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<uint64_t> shape;  // ggml order: shape[0] is the contiguous (row) dimension
    uint64_t offset = 0;          // relative to the data section
    uint64_t n_elements = 0;
    uint64_t n_bytes = 0;
    const uint8_t* data = nullptr;  // into the mapping, valid while the file lives
};

class MappedFile;  // platform mmap wrapper (gguf/mapped_file.h)

class GgufFile {
public:
    // Opens and fully validates; throws GgufError with "<path>: <problem> at offset N".
    static std::unique_ptr<GgufFile> open(const std::filesystem::path& path);
    // Validates an in-memory image (used by the fuzzer and tests); the bytes
    // must outlive the returned object.
    static std::unique_ptr<GgufFile> from_memory(std::span<const uint8_t> bytes,
                                                 std::string display_name = "<memory>");
    ~GgufFile();

    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }
    uint64_t file_size() const { return bytes_.size(); }
    std::span<const uint8_t> bytes() const { return bytes_; }
    const std::filesystem::path& path() const { return path_; }

    const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
    const Value* find(std::string_view key) const;
    std::optional<int64_t> get_int(std::string_view key) const;
    std::optional<double> get_float(std::string_view key) const;
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<std::string> get_string(std::string_view key) const;
    // String arrays (e.g. tokenizer.ggml.tokens); empty if absent or another type.
    std::vector<std::string> get_string_array(std::string_view key) const;
    std::vector<float> get_float_array(std::string_view key) const;
    std::vector<int64_t> get_int_array(std::string_view key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* tensor(std::string_view name) const;

    // For bytes of a file-backed mapping that another copy now serves: the
    // whole pages inside [p, p + n) leave the resident set (they are read
    // from the file again if touched). Does nothing for an in-memory image.
    void release_pages(const uint8_t* p, size_t n) const;

private:
    GgufFile() = default;
    void parse(std::string_view display_name);

    std::filesystem::path path_;
    std::unique_ptr<MappedFile> mapping_;
    std::span<const uint8_t> bytes_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    std::vector<std::pair<std::string, Value>> kv_;
    std::map<std::string, size_t, std::less<>> kv_index_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> tensor_index_;
};

// Writes GGUF v3 files that this reader and llama.cpp accept.
class GgufWriter {
public:
    void set(std::string key, Value value);  // replaces an existing key
    // Adds a tensor; data.size() must equal the row bytes of shape for type.
    void add_tensor(std::string name, GgmlType type, std::vector<uint64_t> shape,
                    std::vector<uint8_t> data);
    void set_alignment(uint64_t a);
    // Writes atomically (temp file + rename); throws GgufError on I/O failure.
    void write(const std::filesystem::path& path) const;
    std::vector<uint8_t> to_bytes() const;

private:
    struct PendingTensor {
        std::string name;
        GgmlType type;
        std::vector<uint64_t> shape;
        std::vector<uint8_t> data;
    };
    std::vector<std::pair<std::string, Value>> kv_;
    std::vector<PendingTensor> tensors_;
    uint64_t alignment_ = 32;
};

// Human-readable summary for `powerinfer-cli --info`: architecture,
// hyper-parameters, tokenizer kind, and a tensor table (name, type, shape, bytes).
std::string describe(const GgufFile& file);

}  // namespace powerinfer::gguf
