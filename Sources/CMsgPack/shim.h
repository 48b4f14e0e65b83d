#ifndef REACTORBUS_CMSGPACK_SHIM_H
#define REACTORBUS_CMSGPACK_SHIM_H
#include <msgpack.h>
#endif
