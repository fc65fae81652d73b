#include "runtime/stop_strings.h"

#include <algorithm>

namespace powerinfer::runtime {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
    for (auto& s : stops)
        if (!s.empty()) stops_.push_back(std::move(s));
}

std::string StopStringMatcher::feed(std::string_view text) {
    if (stopped_) return {};
    held_ += text;
    // The earliest complete stop string wins.
    size_t first = std::string::npos;
    for (const auto& s : stops_) first = std::min(first, held_.find(s));
    if (first != std::string::npos) {
        stopped_ = true;
        std::string out = held_.substr(0, first);
        held_.clear();
        return out;
    }
    // Keep the longest tail that is a proper prefix of some stop string.
    size_t keep = 0;
    for (const auto& s : stops_) {
        const size_t max_len = std::min(s.size() - 1, held_.size());
        for (size_t len = max_len; len > keep; --len) {
            if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
                keep = len;
                break;
            }
        }
    }
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StopStringMatcher::flush() {
    std::string out;
    out.swap(held_);
    return stopped_ ? std::string() : out;
}

}  // namespace powerinfer::runtime
