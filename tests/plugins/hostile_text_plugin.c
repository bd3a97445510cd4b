/* A plug-in whose text is hostile, for the CLI's text-handling tests (tests/cli_hardening_test.sh):
 * its name is not UTF-8, carries ANSI escapes that would clear the screen and print a green
 * "CONFORMANT" and ends in bidirectional controls (U+202E, U+2066, U+200F) that would reorder
 * what follows, its version holds U+FFFE (forbidden in XML 1.0), and every sample() call fails
 * with an error message that is not UTF-8 and holds control characters. */
#define PLUGIN_NAME \
  "hostile\xff\xfe\x1b[2J\x1b[H\x1b[32mCONFORMANT\x1b[0m\xe2\x80\xae\xe2\x81\xa6\xe2\x80\x8f"
#define PLUGIN_PROBE
#define PLUGIN_INFO hostile_version
#include "plugin_skeleton.h"

static int32_t hostile_version(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  info->version = "1\xef\xbf\xbe\xef\xbf\xbf\x01";
  return SAMPCERT_STATUS_OK;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  (void)s;
  return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, row->index,
              "\xc3\x28 bad \xed\xa0\x80 \x1b[2J\x07");
}
