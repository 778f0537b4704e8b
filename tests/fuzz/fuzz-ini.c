/* libFuzzer target: the INI reader (common/ini.c) on arbitrary text.  Besides the
 * sanitizers it checks what the parser promises its callers: every value comes from a
 * named section, keys are non-empty and use only the key alphabet, line numbers never go
 * backwards, and a syntax error always leaves a "file:line: reason" message. */
#include <stdint.h>
#include <string.h>

#include "ini.h"
#include "macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct state {
	unsigned last_line;
};

static bool key_ok(const char *key)
{
	if (!*key)
		return false;
	for (const char *c = key; *c; c++) {
		unsigned char u = (unsigned char)*c;
		if (!((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
		      strchr("-_.@/:*$\\+", u)))
			return false;
	}
	return true;
}

static int on_section(void *userdata, const char *file, unsigned line, const char *section)
{
	struct state *st = userdata;

	if (!*section || line <= st->last_line || section[0] == ' ' ||
	    section[strlen(section) - 1] == ' ')
		abort();
	st->last_line = line;
	return 0;
}

static int on_value(void *userdata, const char *file, unsigned line, const char *section,
		    const char *key, const char *value)
{
	struct state *st = userdata;

	/* one callback per line, in order */
	if (!*section || !key_ok(key) || line <= st->last_line || strchr(value, '\n'))
		abort();
	st->last_line = line;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state st = { 0 };
	char err[256];
	char *text;
	int r;

	if (size > 256 * 1024)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	r = ini_parse_string(text, "fuzz.conf", on_section, on_value, &st, err, sizeof(err));
	if (r != 0 && r != -EINVAL)
		abort();
	if (r == -EINVAL && (!startswith(err, "fuzz.conf:") || !memchr(err, '\0', sizeof(err))))
		abort();
	/* messages show hostile bytes escaped, never raw */
	for (const char *c = err; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			abort();
	free(text);
	return 0;
}
