#ifndef REACTORBUS_CZMQ_SHIM_H
#define REACTORBUS_CZMQ_SHIM_H
#include <zmq.h>
#endif
