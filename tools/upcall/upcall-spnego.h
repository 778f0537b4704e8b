/* The cifs.spnego request-key upcall of nfskeys-upcall-full (tools/upcall/upcall-spnego.c). */
#pragma once

#include "upcall-args.h"

/* Answer the cifs.spnego key a->serial: instantiate it with a struct cifs_spnego_msg
 * (session key + SPNEGO blob) or reject it briefly.  Returns the helper's exit status
 * (0 instantiated, 1 rejected, 3 configuration, 4 key error). */
int upcall_spnego(const struct upcall_args *a);
