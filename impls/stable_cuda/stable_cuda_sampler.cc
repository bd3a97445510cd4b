#include "impls/stable_cuda/stable_cuda_sampler.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "impls/stable_cuda/stable_cuda_kernels.h"
#include "sampcert/row_validation.h"

namespace sampcert::impls {
namespace {

// The process that initialized CUDA through this sampler (0: none). A probe in that process
// may call CUDA directly; any other forks a child for it.
std::atomic<pid_t> g_cuda_process{0};

Error CudaError(cudaError_t e, const char* what) {
  const ErrorCode code = e == cudaErrorMemoryAllocation ? ErrorCode::kOutOfMemory
                         : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
                             ? ErrorCode::kUnsupported
                             : ErrorCode::kInternal;
  return Error{code, fmt::format("stable_cuda: {} failed: {} ({})", what, cudaGetErrorName(e),
                                 cudaGetErrorString(e))};
}

Error NoDevice(const std::string& why) {
  return Error{ErrorCode::kUnsupported, fmt::format("stable_cuda: no CUDA device ({})", why)};
}

// cudaGetDeviceCount, formatted as "<error code> <count> <error string>".
std::string ProbeHere() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  return fmt::format("{} {} {}", static_cast<int>(e), count,
                     e == cudaSuccess ? "" : cudaGetErrorString(e));
}

// The probe in a child process, so that this process never initializes CUDA before a fork.
std::string ProbeInChild() {
  int fds[2];
  if (pipe(fds) != 0) return fmt::format("-1 0 pipe failed: {}", std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return fmt::format("-1 0 fork failed: {}", std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    const std::string out = ProbeHere();
    const ssize_t ignored = write(fds[1], out.data(), out.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (out.empty()) {
    return fmt::format(
        "-1 0 the device probe (cudaGetDeviceCount in a child process) died with "
        "status {}",
        status);
  }
  return out;
}

}  // namespace

struct StableCudaSampler::Device {
  struct Buffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
  };
  pid_t owner = 0;  // the process whose CUDA context the stream and buffers belong to
  cudaStream_t stream = nullptr;
  Buffer logits, masks, params, workspace, out;
  std::vector<cuda::DeviceRowParams> host_params;
  std::vector<cuda::DeviceRowState> host_state;
  cuda::Workspace ws;
  int64_t rows = 0, vocab = 0;
  uint32_t dtype = 0;

  ~Device() { Release(); }
  void Release() {
    if (owner != getpid()) return;  // inherited through fork: not ours to free
    for (Buffer* b : {&logits, &masks, &params, &workspace, &out}) {
      if (b->ptr != nullptr) cudaFree(b->ptr);
      *b = Buffer{};
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    stream = nullptr;
  }
  Error Ensure() {
    if (owner == getpid() && stream != nullptr) return Error{};
    if (owner != getpid()) {  // a copy from before a fork: forget the parent's handles
      for (Buffer* b : {&logits, &masks, &params, &workspace, &out}) *b = Buffer{};
      stream = nullptr;
    }
    owner = getpid();
    g_cuda_process.store(owner);
    if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        e != cudaSuccess) {
      stream = nullptr;
      return CudaError(e, "creating a stream");
    }
    return Error{};
  }
  Error Grow(Buffer* b, std::size_t bytes) {
    if (b->bytes >= bytes) return Error{};
    if (b->ptr != nullptr) cudaFree(b->ptr);
    *b = Buffer{};
    if (cudaError_t e = cudaMalloc(&b->ptr, bytes); e != cudaSuccess) {
      b->ptr = nullptr;
      return CudaError(e, fmt::format("allocating {} bytes", bytes).c_str());
    }
    b->bytes = bytes;
    return Error{};
  }
};

StableCudaSampler::StableCudaSampler() : device_(std::make_unique<Device>()) {}
StableCudaSampler::~StableCudaSampler() = default;

Policies StableCudaSampler::DeclaredPolicies() {
  Policies p;  // stable_cpu's declaration: SPEC's exact semantics
  p.tie_rule = TieRule::kKeepAll;
  p.greedy_tie_break = GreedyTieBreak::kUniform;
  p.order = PipelineOrder::kTemperatureFirst;
  p.nan_policy = NanPolicy::kError;
  p.determinism = Determinism::kCrossDevice;
  p.accuracy = AccuracyClass::kF32;
  return p;
}

void StableCudaSampler::Describe(sampcert_sampler_info* info) {
  info->name = "stable_cuda";
  info->version = "1";
  adapters::PoliciesToInfo(DeclaredPolicies(), info);
  info->thread_safe = 1;  // each handle has its own stream and buffers
}

Error StableCudaSampler::CheckAvailable() {
  std::string probe = g_cuda_process.load() == getpid() ? ProbeHere() : ProbeInChild();
  // A child cannot use CUDA when this process initialized it by other means before the fork
  // (the host program, a test): ask here then. Where there is no device, no context is made,
  // so a later fork is unharmed.
  if (probe.rfind("0 ", 0) != 0 || probe.rfind("0 0 ", 0) == 0) probe = ProbeHere();
  int code = -1, count = 0, consumed = 0;
  if (std::sscanf(probe.c_str(), "%d %d %n", &code, &count, &consumed) < 2) {
    return NoDevice("unreadable device probe: " + probe);
  }
  // Without any NVIDIA driver (a machine with no GPU) the runtime reports "CUDA driver version
  // is insufficient", which reads like an old driver: say what the machine lacks.
  if (code == static_cast<int>(cudaErrorInsufficientDriver) &&
      access("/proc/driver/nvidia/version", F_OK) != 0) {
    return NoDevice("no NVIDIA driver on this machine (no /proc/driver/nvidia): no GPU to run on");
  }
  if (code != 0) {
    return NoDevice(code < 0 ? probe.substr(static_cast<std::size_t>(consumed))
                             : "cudaGetDeviceCount: " +
                                   probe.substr(static_cast<std::size_t>(consumed)));
  }
  if (count == 0) return NoDevice("cudaGetDeviceCount found none");
  return Error{};
}

Error StableCudaSampler::Prepare(const sampcert_batch& batch) {
  const Policies policies = DeclaredPolicies();
  const std::size_t rows = batch.num_rows;
  // Parameters first, in row order; a bad row r is reported after any earlier row's logit
  // error, which is what checking row by row (ValidateRow) would report first.
  for (std::size_t r = 0; r < rows; ++r) {
    const RowView row = adapters::ToRowView(batch, r);
    if (Error e = ValidateRowParameters(row, policies, r); e.code != ErrorCode::kOk) {
      for (std::size_t q = 0; q < r; ++q) {
        if (Error eq = ValidateRow(adapters::ToRowView(batch, q), policies, q);
            eq.code != ErrorCode::kOk) {
          return eq;
        }
      }
      return e;
    }
  }
  if (batch.vocab > kMaxVocab) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("stable_cuda: vocabulary of {} tokens is above its limit of {}",
                             batch.vocab, kMaxVocab)};
  }
  Device& d = *device_;
  if (Error e = d.Ensure(); e.code != ErrorCode::kOk) return e;
  const int64_t v = static_cast<int64_t>(batch.vocab);
  const std::size_t elem = DTypeBytes(static_cast<DType>(batch.dtype));
  const std::size_t row_bytes = static_cast<std::size_t>(v) * elem;
  d.rows = static_cast<int64_t>(rows);
  d.vocab = v;
  d.dtype = static_cast<uint32_t>(batch.dtype);

  bool any_mask = false, any_top_k = false, any_top_p = false;
  d.host_params.assign(rows, cuda::DeviceRowParams{});
  for (std::size_t r = 0; r < rows; ++r) {
    const sampcert_row& in = batch.rows[r];
    cuda::DeviceRowParams& p = d.host_params[r];
    p.temperature = in.temperature == 0.0f ? 0.0f : in.temperature;  // -0 is 0 (IN-2)
    p.top_p = in.top_p;
    p.min_p = in.min_p;
    p.has_mask = in.mask != nullptr;
    p.top_k = in.top_k;
    p.row_id = in.row_id;
    any_mask |= in.mask != nullptr;
    any_top_k |= in.top_k > 0 && in.top_k < v;
    any_top_p |= in.top_p < 1.0f;
  }
  const std::size_t ws_bytes = cuda::WorkspaceBytes(d.rows, v);
  for (const auto& [buffer, bytes] :
       {std::pair{&d.logits, rows * row_bytes},
        std::pair{&d.masks, any_mask ? rows * static_cast<std::size_t>(v) : std::size_t{0}},
        std::pair{&d.params, rows * sizeof(cuda::DeviceRowParams)},
        std::pair{&d.workspace, ws_bytes}}) {
    if (Error e = d.Grow(buffer, bytes); e.code != ErrorCode::kOk) return e;
  }
  d.ws = cuda::CarveWorkspace(d.workspace.ptr, d.rows, v);
  char* logits = static_cast<char*>(d.logits.ptr);
  auto* masks = static_cast<uint8_t*>(d.masks.ptr);
  for (std::size_t r = 0; r < rows; ++r) {
    if (cudaError_t e = cudaMemcpyAsync(logits + r * row_bytes, batch.rows[r].logits, row_bytes,
                                        cudaMemcpyHostToDevice, d.stream);
        e != cudaSuccess) {
      return CudaError(e, "copying logits to the device");
    }
    if (batch.rows[r].mask != nullptr) {
      if (cudaError_t e =
              cudaMemcpyAsync(masks + r * static_cast<std::size_t>(v), batch.rows[r].mask,
                              static_cast<std::size_t>(v), cudaMemcpyHostToDevice, d.stream);
          e != cudaSuccess) {
        return CudaError(e, "copying masks to the device");
      }
    }
  }
  if (cudaError_t e =
          cudaMemcpyAsync(d.params.ptr, d.host_params.data(), rows * sizeof(cuda::DeviceRowParams),
                          cudaMemcpyHostToDevice, d.stream);
      e != cudaSuccess) {
    return CudaError(e, "copying row parameters to the device");
  }
  if (cudaError_t e = cuda::LaunchPrepare(d.logits.ptr, d.dtype, masks,
                                          static_cast<const cuda::DeviceRowParams*>(d.params.ptr),
                                          d.rows, v, any_top_k, any_top_p, d.ws, d.stream);
      e != cudaSuccess) {
    return CudaError(e, "launching the prepare kernels");
  }
  d.host_state.resize(rows);
  if (cudaError_t e =
          cudaMemcpyAsync(d.host_state.data(), d.ws.state, rows * sizeof(cuda::DeviceRowState),
                          cudaMemcpyDeviceToHost, d.stream);
      e != cudaSuccess) {
    return CudaError(e, "copying row states to the host");
  }
  if (cudaError_t e = cudaStreamSynchronize(d.stream); e != cudaSuccess) {
    return CudaError(e, "the prepare kernels");
  }
  // A NaN in the support or an empty support: the shared validator gives the exact message.
  for (std::size_t r = 0; r < rows; ++r) {
    if (d.host_state[r].status == 0) continue;
    Error e = ValidateRow(adapters::ToRowView(batch, r), policies, r);
    if (e.code == ErrorCode::kOk) {
      e = Error{
          ErrorCode::kInternal,
          fmt::format("stable_cuda: row {}: the device flagged a row the validator accepts", r),
          static_cast<int64_t>(r)};
    }
    return e;
  }
  return Error{};
}

Error StableCudaSampler::Probabilities(const sampcert_batch& batch, double* out) {
  if (Error e = Prepare(batch); e.code != ErrorCode::kOk) return e;
  Device& d = *device_;
  const std::size_t n = static_cast<std::size_t>(d.rows * d.vocab);
  if (Error e = d.Grow(&d.out, n * sizeof(double)); e.code != ErrorCode::kOk) return e;
  if (cudaError_t e =
          cuda::LaunchProbabilities(d.logits.ptr, d.dtype, static_cast<const uint8_t*>(d.masks.ptr),
                                    static_cast<const cuda::DeviceRowParams*>(d.params.ptr), d.rows,
                                    d.vocab, d.ws, static_cast<double*>(d.out.ptr), d.stream);
      e != cudaSuccess) {
    return CudaError(e, "launching the probabilities kernel");
  }
  if (cudaError_t e =
          cudaMemcpyAsync(out, d.out.ptr, n * sizeof(double), cudaMemcpyDeviceToHost, d.stream);
      e != cudaSuccess) {
    return CudaError(e, "copying probabilities to the host");
  }
  if (cudaError_t e = cudaStreamSynchronize(d.stream); e != cudaSuccess) {
    return CudaError(e, "the probabilities kernel");
  }
  return Error{};
}

Error StableCudaSampler::Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
                                uint64_t draws_per_row, int64_t* out) {
  if (Error e = Prepare(batch); e.code != ErrorCode::kOk) return e;
  if (draws_per_row == 0) return Error{};
  Device& d = *device_;
  const std::size_t n = static_cast<std::size_t>(d.rows) * draws_per_row;
  if (Error e = d.Grow(&d.out, n * sizeof(int64_t)); e.code != ErrorCode::kOk) return e;
  if (cudaError_t e = cuda::LaunchSample(
          d.logits.ptr, d.dtype, static_cast<const uint8_t*>(d.masks.ptr),
          static_cast<const cuda::DeviceRowParams*>(d.params.ptr), d.rows, d.vocab, d.ws, seed,
          first_draw, draws_per_row, static_cast<int64_t*>(d.out.ptr), d.stream);
      e != cudaSuccess) {
    return CudaError(e, "launching the draw kernel");
  }
  if (cudaError_t e =
          cudaMemcpyAsync(out, d.out.ptr, n * sizeof(int64_t), cudaMemcpyDeviceToHost, d.stream);
      e != cudaSuccess) {
    return CudaError(e, "copying tokens to the host");
  }
  if (cudaError_t e = cudaStreamSynchronize(d.stream); e != cudaSuccess) {
    return CudaError(e, "the draw kernel");
  }
  return Error{};
}

const sampcert_sampler_api* StableCudaSamplerApi() {
  return adapters::BuiltinApi<StableCudaSampler>::Table();
}

}  // namespace sampcert::impls
