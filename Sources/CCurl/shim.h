#ifndef REACTORBUS_CCURL_SHIM_H
#define REACTORBUS_CCURL_SHIM_H
#include <stddef.h>
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo take their value as a C variadic argument, which Swift
// cannot pass: these pass one value of each kind the HTTP client uses.
static inline CURLcode reactorbus_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reactorbus_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reactorbus_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reactorbus_curl_setopt_headers(CURL *handle, struct curl_slist *headers) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
}

typedef size_t (*reactorbus_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode reactorbus_curl_setopt_write_function(CURL *handle, reactorbus_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode reactorbus_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}
#endif
