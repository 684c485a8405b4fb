// A real TCP reset for the provider stand-ins: the fault "the connection was reset" as a
// client meets it (an RST, no FIN first), which an early close cannot show.
#pragma once

namespace corral::test {

// Resets this process's connection from 127.0.0.1:`local_port` to `peer_port` (the ports
// of the request being served); false when no such socket is open. cpp-httplib hands its
// handlers no socket and shuts one down (a FIN) before closing it, so SO_LINGER {1, 0}
// would not do: the socket is found by its ports and disconnected with connect(AF_UNSPEC),
// which aborts it with an RST at once.
bool reset_tcp_connection(int local_port, int peer_port);

}  // namespace corral::test
