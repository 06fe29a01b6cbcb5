// A TCP listening socket on 127.0.0.1 at a port the kernel picks: the web module's render
// proxy, and the real servers the modules' tests run their clients against.
//
//   auto l = listen_on_loopback(16);
//   if (!l) ...;                 // l.error() says which call failed and why
//   serve(l->fd); connect_to(l->port);
#pragma once

#include "common/result.h"

namespace genvm {

struct LoopbackListener {
  int fd = -1;    // SOCK_CLOEXEC; the caller closes it
  int port = 0;   // host byte order
};

// Code `listen`: socket, bind, listen or getsockname failed (nothing left open).
Result<LoopbackListener> listen_on_loopback(int backlog);

}  // namespace genvm
