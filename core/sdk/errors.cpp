#include "corral/errors.hpp"

namespace corral {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::internal: return "internal";
    case ErrorCode::not_found: return "not-found";
    case ErrorCode::auth: return "auth";
    case ErrorCode::invalid_argument: return "invalid-argument";
    case ErrorCode::quota: return "quota";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::cancelled: return "cancelled";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::config: return "config";
  }
  return "internal";
}

ErrorCode error_code_from_abi(int code) {
  if (code >= CORRAL_ERR_INTERNAL && code <= CORRAL_ERR_UNSUPPORTED) return static_cast<ErrorCode>(code);
  return ErrorCode::internal;
}

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
    case ErrorCode::unsupported: return kExitUsage;
    case ErrorCode::not_found: return kExitNotFound;
    case ErrorCode::auth: return kExitAuth;
    case ErrorCode::quota: return kExitQuota;
    case ErrorCode::unavailable: return kExitUnavailable;
    case ErrorCode::timeout: return kExitTimeout;
    case ErrorCode::cancelled: return kExitCancelled;
    case ErrorCode::config: return kExitConfig;
    case ErrorCode::internal: return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace corral
