// A small tensor-core GEMM, C = A B (half inputs, float accumulation), one warp per 16x16 tile of C,
// written for warpspeed's interval-model example: each loop iteration loads a 16x16 tile of A and
// of B and multiplies them with one WMMA operation (two HMMA.16816.F32 instructions on sm_80).
#include <mma.h>
#include <cuda_fp16.h>

using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const half *a, const half *b, float *c, int m, int n, int k)
{
    const int tile_row = blockIdx.y * 16;
    const int tile_col = (blockIdx.x * blockDim.x + threadIdx.x) / 32 * 16;
    if (tile_row >= m || tile_col >= n) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll 4
    for (int i = 0; i < k; i += 16) {
        wmma::load_matrix_sync(fa, a + tile_row * k + i, k);
        wmma::load_matrix_sync(fb, b + tile_col * k + i, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + tile_row * n + tile_col, acc, n, wmma::mem_row_major);
}
