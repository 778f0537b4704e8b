/* A strict INI reader for nfskeys configuration: sections, key = value, comments.
 * Every malformed line is reported with file:line and the reason. */
#pragma once

#include <stddef.h>

/* Called for each assignment; return < 0 to stop parsing with that error. */
typedef int (*ini_handler_fn)(void *userdata, const char *file, unsigned line,
			      const char *section, const char *key, const char *value);

/* Called for each section header (even empty ones); may be NULL. */
typedef int (*ini_section_fn)(void *userdata, const char *file, unsigned line,
			      const char *section);

/* Parse a NUL-terminated buffer; "file" is only used in messages.  On a syntax error
 * returns -EINVAL and writes "file:line: reason" into err (size errlen). */
int ini_parse_string(const char *text, const char *file, ini_section_fn on_section,
		     ini_handler_fn on_value, void *userdata, char *err, size_t errlen);

/* Read and parse a file (at most 1 MiB).  -errno from open/read, -EFBIG, -EINVAL. */
int ini_parse_file(const char *path, ini_section_fn on_section, ini_handler_fn on_value,
		   void *userdata, char *err, size_t errlen);
