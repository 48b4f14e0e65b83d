#ifndef REACTORBUS_CMICROHTTPD_SHIM_H
#define REACTORBUS_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// MHD_start_daemon takes its options as C variadic arguments, which Swift cannot pass: this
// passes an MHD_OPTION_ARRAY (terminated by MHD_OPTION_END) instead. No listening port of its
// own: the caller hands over a bound, listening socket in the array (MHD_OPTION_LISTEN_SOCKET).
static inline struct MHD_Daemon *reactorbus_mhd_start(unsigned int flags,
                                                      MHD_AccessHandlerCallback handler,
                                                      void *handler_context,
                                                      struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}
#endif
