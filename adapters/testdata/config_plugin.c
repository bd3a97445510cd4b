/* A test plug-in that shows what create() received (--sampler-config): create refuses the
 * config "refuse", and every sample call fails with a message quoting the config it was
 * created with ("NULL" when none), so a test can see the string cross the ABI. */
#include <sampcert/sampler_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sampcert_sampler {
  char config[256];
  int has_config;
};

static void set_error(sampcert_error* e, int32_t code, const char* msg) {
  e->code = code;
  e->row = -1;
  snprintf(e->message, sizeof e->message, "%s", msg);
}

static int32_t get_info(sampcert_sampler_info* info, sampcert_error* e) {
  (void)e;
  memset((char*)info + sizeof info->struct_size, 0, sizeof *info - sizeof info->struct_size);
  info->name = "config_plugin";
  info->version = "1";
  info->capabilities = SAMPCERT_CAP_F32;
  info->truncation_order[0] = SAMPCERT_STEP_TOP_K;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  return SAMPCERT_STATUS_OK;
}

static int32_t create(const char* config, sampcert_sampler** out, sampcert_error* e) {
  if (config != NULL && strcmp(config, "refuse") == 0) {
    set_error(e, SAMPCERT_STATUS_INVALID_ARGUMENT, "config_plugin: config 'refuse' refused");
    return SAMPCERT_STATUS_INVALID_ARGUMENT;
  }
  sampcert_sampler* s = calloc(1, sizeof *s);
  if (s == NULL) return SAMPCERT_STATUS_OUT_OF_MEMORY;
  s->has_config = config != NULL;
  if (config != NULL) snprintf(s->config, sizeof s->config, "%s", config);
  *out = s;
  return SAMPCERT_STATUS_OK;
}

static void destroy(sampcert_sampler* s) { free(s); }

static int32_t sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed,
                      uint64_t first_draw, uint64_t draws_per_row, int64_t* out,
                      sampcert_error* e) {
  char msg[400];
  (void)b, (void)seed, (void)first_draw, (void)draws_per_row, (void)out;
  if (s->has_config) {
    snprintf(msg, sizeof msg, "created with config '%s'", s->config);
  } else {
    snprintf(msg, sizeof msg, "created with config NULL");
  }
  set_error(e, SAMPCERT_STATUS_INVALID_ARGUMENT, msg);
  return SAMPCERT_STATUS_INVALID_ARGUMENT;
}

static const sampcert_sampler_api kApi = {SAMPCERT_SAMPLER_API_STRUCT_SIZE,
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
  *out = NULL;
  if (host_major != SAMPCERT_ABI_VERSION_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = &kApi;
  return SAMPCERT_STATUS_OK;
}
