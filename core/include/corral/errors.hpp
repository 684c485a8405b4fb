// The one error vocabulary of corral: the closed set of failure causes, the typed error
// every layer throws, and the exit status each cause gives the `corral` process
// (docs/exit-codes.md). Plugins report the causes through the C ABI; `config` is the
// host's own and never crosses it.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "corral/plugin_abi.h"

namespace corral {

enum class ErrorCode {
  internal = CORRAL_ERR_INTERNAL,
  not_found = CORRAL_ERR_NOT_FOUND,
  auth = CORRAL_ERR_AUTH,
  invalid_argument = CORRAL_ERR_INVALID_ARGUMENT,
  quota = CORRAL_ERR_QUOTA,
  unavailable = CORRAL_ERR_UNAVAILABLE,
  timeout = CORRAL_ERR_TIMEOUT,
  cancelled = CORRAL_ERR_CANCELLED,
  unsupported = CORRAL_ERR_UNSUPPORTED,
  // Host only: a broken settings file, registry or plugin. A plugin cannot report it.
  config = 100,
};
// The ABI's codes are exactly the range [internal, unsupported]; a new ABI code must be
// added here too, or this fails to compile.
static_assert(static_cast<int>(ErrorCode::internal) == 1 && static_cast<int>(ErrorCode::unsupported) == 9 &&
                  CORRAL_ERR_UNSUPPORTED - CORRAL_ERR_INTERNAL == 8,
              "ErrorCode must mirror corral_error_code");

// Canonical kebab-case name of an error code ("not-found").
std::string_view to_string(ErrorCode code);
// The ErrorCode for a code that crossed the ABI; anything outside its set is internal.
ErrorCode error_code_from_abi(int code);

// corral's own exit statuses (sysexits style); a run otherwise exits with the command's.
inline constexpr int kExitUsage = 64;        // invalid-argument, unsupported: bad flags or input
inline constexpr int kExitNotFound = 66;     // not-found: no such lease or sandbox
inline constexpr int kExitUnavailable = 69;  // unavailable: provider unreachable or failing
inline constexpr int kExitInternal = 70;     // internal: a bug or an unexpected failure
inline constexpr int kExitQuota = 75;        // quota: rate limit or quota, try again later
inline constexpr int kExitAuth = 77;         // auth: credentials missing or refused
inline constexpr int kExitConfig = 78;       // config: broken settings, registry or plugin
inline constexpr int kExitTimeout = 124;     // timeout: the command ran past --timeout
inline constexpr int kExitCancelled = 130;   // cancelled: interrupted (Ctrl-C)

// The exit status of a failure with this cause.
int exit_code_for(ErrorCode code);

// A failure with a cause, a message that says what went wrong and an optional hint that
// says how to fix it. Thrown inside core and plugins; never across the C boundary.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string message, std::string hint = {})
      : std::runtime_error(std::move(message)), code_(code), hint_(std::move(hint)) {}
  ErrorCode code() const { return code_; }
  const std::string& hint() const { return hint_; }
  int exit_code() const { return exit_code_for(code_); }

  // Set on a failure that is only "not now" (a rate limit): the same call may succeed
  // once this long has passed; zero when the provider said "later" without saying when.
  // Core waits it out (every corral process of the machine with it) before creating again.
  const std::optional<std::chrono::milliseconds>& retry_after() const { return retry_after_; }
  Error& set_retry_after(std::chrono::milliseconds wait) {
    retry_after_ = wait;
    return *this;
  }

 private:
  ErrorCode code_;
  std::string hint_;
  std::optional<std::chrono::milliseconds> retry_after_;
};

// A broken settings file, registry or plugin (exit 78).
class ConfigError : public Error {
 public:
  explicit ConfigError(std::string message, std::string hint = {})
      : Error(ErrorCode::config, std::move(message), std::move(hint)) {}
};

}  // namespace corral
