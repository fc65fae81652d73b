// Holds generated text back while it could still turn into a stop string, so
// that a stop string never reaches the user, even when it arrives split over
// several tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace powerinfer::runtime {

class StopStringMatcher {
public:
    explicit StopStringMatcher(std::vector<std::string> stops);

    // Adds text; returns what can be shown now. After a stop string is
    // found, stopped() is true and the returned text ends right before it.
    std::string feed(std::string_view text);
    // The held-back tail (call at the end when no stop string matched).
    std::string flush();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

}  // namespace powerinfer::runtime
