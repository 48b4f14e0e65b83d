#ifndef REACTORBUS_CZMQ_SHIM_H
#define REACTORBUS_CZMQ_SHIM_H
#include <zmq.h>
#ifdef __linux__
/* epoll, for waiting on many sockets' ZMQ_FD descriptors (ZMQManySocketPoller); Glibc's
   Swift module does not include it. */
#include <sys/epoll.h>
/* ppoll(2), for waits with nanosecond precision (ZMQPoller): glibc declares it only for
   _GNU_SOURCE, which a package cannot define for its C imports without unsafe flags; this is
   glibc's own declaration (poll.h), for the function glibc exports. */
#include <poll.h>
#include <signal.h>
#include <time.h>
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const __sigset_t *sigmask);
#endif
#endif
