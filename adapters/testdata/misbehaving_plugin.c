/* A plug-in that crashes and hangs on purpose, for the runner's isolation tests: it segfaults on
 * rows of 6 tokens at temperature 0 and spins forever on rows of 16 tokens. Otherwise it
 * returns token 0 (a wrong but well-formed answer). */
#include <sampcert/sampler_abi.h>
#include <stddef.h>
#include <string.h>

static int32_t get_info(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  size_t size = info->struct_size;
  memset(info, 0, size);
  info->struct_size = size;
  info->name = "misbehaving";
  info->version = "1";
  info->capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_TEMPERATURE_ZERO;
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
  (void)seed;
  (void)first_draw;
  (void)error;
  if (b->vocab == 6 && b->rows[0].temperature == 0.0f) {
    volatile int* null_pointer = NULL;
    *null_pointer = 1; /* SIGSEGV */
  }
  if (b->vocab == 16) {
    for (volatile unsigned long spin = 0;; ++spin) {
    }
  }
  for (uint64_t j = 0; j < draws * b->num_rows; ++j) out[j] = 0;
  return SAMPCERT_STATUS_OK;
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
