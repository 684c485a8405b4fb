// Who a request comes from, as the API server's authenticators name it.
#pragma once

#include <string>
#include <vector>

namespace corral::kubernetes::standin {

struct Identity {
  std::string user;                 // "alice", "system:serviceaccount:ns:name", "system:anonymous"
  std::vector<std::string> groups;  // "system:authenticated", ...
  bool anonymous() const { return user == "system:anonymous"; }
};

}  // namespace corral::kubernetes::standin
