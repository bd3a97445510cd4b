// Generated values that are the same on every machine (REPRO-1). std::mt19937_64 is specified
// bit for bit by the standard, so its raw 64-bit output is portable; the standard's
// distributions (normal_distribution, uniform_real_distribution) are not (libstdc++ and libc++
// differ), and libm's exp/log/pow may differ in the last bit between libraries and between the
// code paths one library picks per CPU (glibc's FMA variants). Everything here maps the raw
// stream with IEEE basic operations only (+ - * /, exact scalings), in a translation unit
// compiled without FMA contraction, so each value is bit-identical everywhere.
#ifndef SAMPCERT_PROPERTIES_PORTABLE_RANDOM_H_
#define SAMPCERT_PROPERTIES_PORTABLE_RANDOM_H_

#include <cstdint>
#include <random>
#include <string_view>

namespace sampcert::properties {

// u in [0, 1) from the top 53 bits: exact in double.
inline double UnitDouble(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

// An approximately standard normal value: the Irwin-Hall sum of 12 uniforms minus 6 (mean 0,
// variance 1, tails cut at +-6). Every partial sum is exact in double, so it is portable; the
// generators need a bell shape, not Gaussian tails.
inline double PortableNormal(std::mt19937_64& rng) {
  double s = 0;
  for (int i = 0; i < 12; ++i) s += UnitDouble(rng());
  return s - 6.0;
}

// a + (b - a) u, rounded once to float.
inline float PortableUniform(std::mt19937_64& rng, float a, float b) {
  const double u = UnitDouble(rng());
  return static_cast<float>(static_cast<double>(a) + (static_cast<double>(b) - a) * u);
}

// exp and log from basic operations (series after an exact range reduction); accurate to a few
// ulps of double, which is all a generator needs, and identical on every IEEE machine.
double PortableExp(double x);
double PortableLog(double x);  // x > 0

// FNV-1a, 64 bits: a fixed hash (std::hash differs between standard libraries).
inline uint64_t FixedHash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// SplitMix64's finalizer over a combination of two words: derives independent seeds.
inline uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_PORTABLE_RANDOM_H_
