// Built against the installed headers and library only.
#include <sampcert/reference_distribution.h>
#include <sampcert/reference_sampler.h>

#include <cstdio>
#include <cstring>

int main() {
  const float logits[3] = {0.0f, 1.0f, 2.0f};
  uint32_t bits[3];
  std::memcpy(bits, logits, sizeof bits);
  sampcert::RowView row;
  row.logits = bits;
  row.vocab = 3;
  auto d = sampcert::ComputeReference(row, sampcert::Policies{});
  if (!d.ok()) return 1;
  const sampcert::ReferenceSampler sampler(d->probs);
  std::printf("p2 = %.6f, token %lld\n", static_cast<double>(d->probs[2]),
              static_cast<long long>(sampler.Draw(1, 0, 0)));
  return d->probs[2] > 0.66L && d->probs[2] < 0.67L ? 0 : 1;
}
