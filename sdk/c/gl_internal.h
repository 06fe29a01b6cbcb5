/* Shared between the SDK's own files; not part of its API. */
#ifndef GENLAYER_SDK_INTERNAL_H
#define GENLAYER_SDK_INTERNAL_H

#include "genlayer.h"

/* Sends {name: body} (body given encoded) through gl_call; fd as gl_call_raw. */
int gl_call_named(const char* name, const gl_buf* body, uint32_t* fd);

#endif
