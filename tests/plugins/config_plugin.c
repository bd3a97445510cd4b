/* A test plug-in that shows what create() received (--sampler-config): create refuses the
 * config "refuse", and every sample call fails with a message quoting the config it was
 * created with ("NULL" when none), so a test can see the string cross the ABI. */
struct created_with {
  char config[256];
  int has_config;
};

#define PLUGIN_NAME "config_plugin"
#define PLUGIN_PROBE
#define PLUGIN_STATE struct created_with
#define PLUGIN_CREATE keep_config
#define PLUGIN_INFO no_determinism
#include "plugin_skeleton.h"

static int32_t no_determinism(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  info->determinism = SAMPCERT_DETERMINISM_NONE;
  return SAMPCERT_STATUS_OK;
}

static int32_t keep_config(const char* config, sampcert_sampler* s, sampcert_error* error) {
  if (config != NULL && strcmp(config, "refuse") == 0) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "config_plugin: config 'refuse' refused");
  }
  s->state.has_config = config != NULL;
  if (config != NULL) snprintf(s->state.config, sizeof s->state.config, "%s", config);
  return SAMPCERT_STATUS_OK;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  char msg[400];
  (void)row;
  if (s->state.has_config) {
    snprintf(msg, sizeof msg, "created with config '%s'", s->state.config);
  } else {
    snprintf(msg, sizeof msg, "created with config NULL");
  }
  return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, msg);
}
