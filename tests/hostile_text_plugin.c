/* A plug-in whose text is hostile, for the CLI's text-handling tests: its name is not UTF-8,
 * carries ANSI escapes that would clear the screen and print a green "CONFORMANT" and ends in
 * bidirectional controls (U+202E, U+2066, U+200F) that would reorder what follows, its version
 * holds U+FFFE (forbidden in XML 1.0), and every sample() call fails with an error message that
 * is not UTF-8 and holds control characters. */
#include <sampcert/sampler_abi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int32_t get_info(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  size_t size = info->struct_size;
  memset(info, 0, size);
  info->struct_size = size;
  info->name =
      "hostile\xff\xfe\x1b[2J\x1b[H\x1b[32mCONFORMANT\x1b[0m\xe2\x80\xae\xe2\x81\xa6\xe2\x80\x8f";
  info->version = "1\xef\xbf\xbe\xef\xbf\xbf\x01";
  info->capabilities = SAMPCERT_CAP_F32;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  info->determinism = SAMPCERT_DETERMINISM_SAME_SEED;
  return SAMPCERT_STATUS_OK;
}

static int kHandle;

static int32_t create(const char* config, sampcert_sampler** out, sampcert_error* error) {
  (void)config;
  (void)error;
  *out = (sampcert_sampler*)&kHandle;
  return SAMPCERT_STATUS_OK;
}

static void destroy(sampcert_sampler* s) { (void)s; }

static int32_t sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed,
                      uint64_t first_draw, uint64_t draws, int64_t* out, sampcert_error* error) {
  (void)s;
  (void)b;
  (void)seed;
  (void)first_draw;
  (void)draws;
  (void)out;
  if (error != NULL && error->struct_size >= sizeof(sampcert_error)) {
    error->code = SAMPCERT_STATUS_INVALID_ARGUMENT;
    error->row = 0;
    snprintf(error->message, sizeof error->message, "row 0: \xc3\x28 bad \xed\xa0\x80 \x1b[2J\x07");
  }
  return SAMPCERT_STATUS_INVALID_ARGUMENT;
}

static const sampcert_sampler_api kApi = {sizeof(sampcert_sampler_api),
                                          SAMPCERT_ABI_VERSION_MAJOR,
                                          SAMPCERT_ABI_VERSION_MINOR,
                                          get_info,
                                          create,
                                          destroy,
                                          NULL,
                                          sample};

SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major, uint32_t host_minor,
                                                 const sampcert_sampler_api** out) {
  (void)host_minor;
  *out = host_major == SAMPCERT_ABI_VERSION_MAJOR ? &kApi : NULL;
  return *out ? SAMPCERT_STATUS_OK : SAMPCERT_STATUS_VERSION_MISMATCH;
}
