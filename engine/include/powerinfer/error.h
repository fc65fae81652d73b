// The one error type of the facade. Errors a user can hit carry a message
// saying what to do; engine functions throw EngineError for bad input
// (files, options) and never abort.
#pragma once

#include <stdexcept>
#include <string>

namespace powerinfer {

class EngineError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace powerinfer
