"""CUDA C sources of the calibration microbenchmarks (compiled at run time by cupy's RawModule).

Each benchmark follows the method of the matching gpu-benches benchmark (D. Ernst, GPU
microbenchmarks, https://github.com/te42kyfo/gpu-benches; Ernst, Holzer, Hager, Knorr, Wellein:
"Analytical Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel
and Distributed Computing, 2023), written anew here; no code is taken from it:

* ``STREAM``: DRAM streams of 8 B doubles, one element per thread and stream (``init`` writes one
  stream, ``read`` reads one, ``scale`` reads one and writes one, ``triad`` reads two and writes
  one, ``stencil1d3pt`` reads three neighbours and writes one); a launch asks for enough dynamic
  shared memory that two blocks fit on an SM, so the block size sets the occupancy;
* ``L2_READ``: a read-only sum over a data set that every block re-reads a chunk of, past the L1;
* ``L1_READ``: one block per SM re-reading the same small buffer of floats;
* ``CHASE``: one thread following a random cyclic permutation, timed with ``clock64``, and a spin
  kernel that counts SM cycles over a host-timed interval (the SM clock);
* ``SCALE``: the small kernel ``A[i] = 0.25 B[i]`` launched back to back;
* ``STRIDES``: one block of 1024 threads, 8 loads per iteration from ``base(t) + 4 k``, timed
  with ``clock64`` (volatile loads, so the loop-invariant loads are not hoisted);
* ``ROOFLINE``: a float stream of element pairs with ``its`` fused multiply-adds per pair.

Every kernel writes its result only under a condition that never holds at run time (the arrays
hold positive numbers only), so the compiler keeps the loads and the arithmetic.
"""

from __future__ import annotations

#: Threads per block of the L1 and strides benchmarks, and of the roofline kernel.
L1_BLOCK_THREADS = 256
STRIDES_BLOCK_THREADS = 1024
ROOFLINE_BLOCK_THREADS = 256
#: Loads per loop iteration of the strides kernel and their element offsets (``4 k``).
STRIDES_LOADS = 8
STRIDES_OFFSET = 4
#: Threads of the L2 benchmark's blocks.
L2_BLOCK_THREADS = 1024

STREAM = r"""
// one element per thread and stream, no grid-stride loop (the blocks of a launch come and go, as
// those of a stencil kernel); the dynamic shared memory the launch asks for only limits the blocks per SM
extern __shared__ char occupancy_pad[];
extern "C" __global__ void stream_init(double* __restrict__ a, long long n, double s) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = s;
}
extern "C" __global__ void stream_read(const double* __restrict__ a, double* __restrict__ out, long long n, double s) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double v = i < n ? a[i] : 0.0;
    if (v < 0.0) out[0] = v;  // never: the arrays hold positive numbers only
}
extern "C" __global__ void stream_scale(const double* __restrict__ a, double* __restrict__ b, long long n, double s) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = s * a[i];
}
extern "C" __global__ void stream_triad(const double* __restrict__ a, const double* __restrict__ b,
                                        double* __restrict__ c, long long n, double s) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + s * b[i];
}
extern "C" __global__ void stream_stencil1d3pt(const double* __restrict__ a, double* __restrict__ b, long long n, double s) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) b[i] = s * (a[i - 1] + a[i] + a[i + 1]);
}
"""

L2_READ = r"""
extern "C" __global__ void l2_read(const double* __restrict__ a, double* __restrict__ out, long long n,
                                   long long chunk) {
    // n is a multiple of chunk, chunk a multiple of 4 x blockDim.x: four independent loads in flight;
    // the loads bypass the L1 (ld.global.cg), so blocks of one SM reading the same chunk measure the L2
    const double* p = a + ((long long)blockIdx.x % (n / chunk)) * chunk;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (long long j = threadIdx.x; j < chunk; j += 4 * blockDim.x) {
        s0 += __ldcg(p + j);
        s1 += __ldcg(p + j + blockDim.x);
        s2 += __ldcg(p + j + 2 * blockDim.x);
        s3 += __ldcg(p + j + 3 * blockDim.x);
    }
    if (s0 + s1 + s2 + s3 == -1.0) out[0] = s0 + s1 + s2 + s3;
}
"""

L1_READ = r"""
extern "C" __global__ void l1_read(const float* __restrict__ a, float* __restrict__ out, int n, int repeats) {
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int r = 0; r < repeats; r++) {
        int i = threadIdx.x;
        for (; i + 3 * blockDim.x < n; i += 4 * blockDim.x) {
            s0 += __ldg(a + i);
            s1 += __ldg(a + i + blockDim.x);
            s2 += __ldg(a + i + 2 * blockDim.x);
            s3 += __ldg(a + i + 3 * blockDim.x);
        }
        for (; i < n; i += blockDim.x) s0 += __ldg(a + i);
        s0 *= 0.999f;
    }
    if (s0 + s1 + s2 + s3 == -1.0f) out[0] = s0 + s1 + s2 + s3;
}
"""

CHASE = r"""
// each pointer holds the address of the next one: one dependent load per step, no index arithmetic
extern "C" __global__ void chase(unsigned long long* state, long long warm, long long steps) {
    const unsigned long long* p = (const unsigned long long*)state[0];
    for (long long i = 0; i < warm; i++) p = (const unsigned long long*)*p;
    long long t0 = clock64();
    for (long long i = 0; i < steps; i++) p = (const unsigned long long*)*p;
    long long t1 = clock64();
    state[0] = (unsigned long long)p;  // the next run goes on from here (never the same slots twice)
    state[1] = (unsigned long long)(t1 - t0);
}
extern "C" __global__ void spin(unsigned long long* out, long long cycles) {
    long long t0 = clock64();
    long long t = t0;
    while (t - t0 < cycles) t = clock64();
    out[0] = (unsigned long long)(t - t0);
}
"""

SCALE = r"""
extern "C" __global__ void scale(double* __restrict__ a, const double* __restrict__ b, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 0.25 * b[i];
}
"""

STRIDES = r"""
template <typename T> __device__ __forceinline__ T load(const T* p);
template <> __device__ __forceinline__ float load<float>(const float* p) {
    float v; asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(v) : "l"(p)); return v;
}
template <> __device__ __forceinline__ double load<double>(const double* p) {
    double v; asm volatile("ld.global.ca.f64 %0, [%1];" : "=d"(v) : "l"(p)); return v;
}
template <typename T>
__device__ void strides_body(const T* __restrict__ a, T* out, long long* cycles, int kind, int arg, int pitch,
                             int iterations, int zero) {
    int tx = threadIdx.x, ty = threadIdx.y;
    long long base = kind == 0 ? (long long)(tx % 64) * arg
                               : (long long)(tx % 64) + (long long)((ty % 32) + 1) * pitch;
    const T* p = a + base;
    T sum = 0;
    __syncthreads();
    long long t0 = clock64();
    for (int it = 0; it < iterations; it++) {
        p += it & zero;  // zero at run time: the compiler cannot hoist the loads out of the loop
        T v0 = load<T>(p), v1 = load<T>(p + 4), v2 = load<T>(p + 8), v3 = load<T>(p + 12);
        T v4 = load<T>(p + 16), v5 = load<T>(p + 20), v6 = load<T>(p + 24), v7 = load<T>(p + 28);
        sum += v0 * v4; sum += v1 * v5; sum += v2 * v6; sum += v3 * v7;
    }
    __syncthreads();
    long long t1 = clock64();
    if (tx == 0 && ty == 0) cycles[0] = t1 - t0;
    if (sum == (T)-1) out[0] = sum;
}
extern "C" __global__ void strides_float(const float* a, float* out, long long* cycles, int kind, int arg,
                                         int pitch, int iterations, int zero) {
    strides_body<float>(a, out, cycles, kind, arg, pitch, iterations, zero);
}
extern "C" __global__ void strides_double(const double* a, double* out, long long* cycles, int kind, int arg,
                                          int pitch, int iterations, int zero) {
    strides_body<double>(a, out, cycles, kind, arg, pitch, iterations, zero);
}
"""

ROOFLINE = r"""
extern "C" __global__ void roofline(const float* __restrict__ a, const float* __restrict__ b, float* out,
                                    long long n, int its) {
    long long stride = (long long)gridDim.x * blockDim.x;
    float sum = 0.0f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = a[i] - b[i];
        for (int k = 0; k < its; k++) v = v * v + 0.25f;
        sum += v;
    }
    if (sum == -1.0f) out[0] = sum;
}
"""

#: Every source, by name (the compile check compiles each).
SOURCES = {"stream": STREAM, "l2_read": L2_READ, "l1_read": L1_READ, "chase": CHASE, "scale": SCALE,
           "strides": STRIDES, "roofline": ROOFLINE}
