// The sandbox a failed create may still have made. A create cut short by a timeout, a
// broken connection or a garbled answer may have made a sandbox that nobody would own:
// core never learns its id. It carries the lease's label (ownership.hpp), so the plugin
// finds it with its own list primitive and deletes it with its own destroy before it
// reports the failure.
#pragma once

#include <string>

#include "corral/errors.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/remote/identity.hpp"
#include "corral/types.hpp"

namespace corral::sdk::remote {

// Destroys what `provider` lists with lease `lease_id`'s label; instead of throwing, warns how to find and remove them.
void remove_strays(const Identity& identity, Provider& provider, const std::string& lease_id, const Host& host);

// Returns `make()`; when it throws Error(unavailable) for a request with a lease, removes that lease's strays first.
template <class Make>
auto create_or_sweep(const Identity& identity, Provider& provider, const CreateRequest& request, const Host& host,
                     Make&& make) -> decltype(make()) {
  try {
    return make();
  } catch (const Error& e) {
    // Any other failure is the provider's answer that it made nothing.
    if (e.code() == ErrorCode::unavailable && !request.lease_id.empty())
      remove_strays(identity, provider, request.lease_id, host);
    throw;
  }
}

}  // namespace corral::sdk::remote
