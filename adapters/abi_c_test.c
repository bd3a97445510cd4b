/* The ABI header compiled as C11: it must parse, its static layout checks must hold in C, and a
 * C host can fill and read every struct. */
#include <sampcert/sampler_abi.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  sampcert_error error;
  sampcert_row row;
  sampcert_batch batch;
  sampcert_sampler_info info;
  float logits[2] = {0.0f, 1.0f};
  memset(&error, 0, sizeof error);
  memset(&info, 0, sizeof info);
  error.struct_size = SAMPCERT_ERROR_STRUCT_SIZE;
  info.struct_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;
  memset(&row, 0, sizeof row);
  row.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
  row.logits = logits;
  row.temperature = 1.0f;
  row.top_p = 1.0f;
  batch.struct_size = SAMPCERT_BATCH_STRUCT_SIZE;
  batch.dtype = SAMPCERT_DTYPE_F32;
  batch.vocab = 2;
  batch.num_rows = 1;
  batch.rows = &row;
  if (sizeof(sampcert_row) != 176 || SAMPCERT_ROW_MINOR3_STRUCT_SIZE != 56 ||
      SAMPCERT_ROW_MINOR4_STRUCT_SIZE != 104 || SAMPCERT_ROW_MINOR5_STRUCT_SIZE != 120 ||
      SAMPCERT_ROW_MINOR6_STRUCT_SIZE != 160 || sizeof(sampcert_batch) != 80 ||
      SAMPCERT_BATCH_MINOR7_STRUCT_SIZE != 40 || sizeof(sampcert_sampler_api) != 64 ||
      sizeof(sampcert_chain) != 56 || sizeof(sampcert_chain_batch) != 72 ||
      sizeof(sampcert_error) != 1048 || sizeof(sampcert_sampler_info) != 120) {
    fprintf(stderr, "unexpected ABI struct sizes\n");
    return 1;
  }
  if (batch.rows[0].temperature != 1.0f || SAMPCERT_ABI_VERSION_MAJOR != 1u) return 1;
  printf("sampler ABI %u.%u compiles as C; layout as pinned\n", SAMPCERT_ABI_VERSION_MAJOR,
         SAMPCERT_ABI_VERSION_MINOR);
  return 0;
}
