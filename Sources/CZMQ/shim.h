#ifndef REACTORBUS_CZMQ_SHIM_H
#define REACTORBUS_CZMQ_SHIM_H
#include <zmq.h>
#ifdef __linux__
/* epoll, for waiting on many sockets' ZMQ_FD descriptors (ZMQManySocketPoller); Glibc's
   Swift module does not include it. */
#include <sys/epoll.h>
#endif
#endif
