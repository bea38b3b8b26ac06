// Stream generators for tests and benchmarks (deterministic for a seed).
#pragma once

#include <cstdint>
#include <vector>

#include "lib/sched/stream.h"

namespace ork::sched {

// Random well-formed streams: programs with loaded weights, reads of earlier outputs
// (after their wait), in-place updates, partial ranges, delayed waits, stores, barriers.
struct RandomParams {
  int programs = 6;
  int64_t memory_bytes = 256 << 10;
  int cores = 2;
  int max_outstanding = 3;   // programs started and not yet waited, in the input order
  int barrier_percent = 2;   // chance of a barrier between programs
  int max_buffer_percent = 10;  // largest buffer, % of memory: 30+ makes memory tight
  int read_window = 12;         // programs read outputs of the last N waited programs
};
Stream make_random_stream(uint64_t seed, const RandomParams& params);

// Transformer decode: per layer, `matmuls` matmuls split into `tiles` weight tiles each;
// per tile a load (weights), a program (reads the tile and the layer activation, writes
// its slice of the next activation) and its wait; one store per layer. Weight tiles are
// large and memory-bound (load cycles > compute cycles), and a layer's weights exceed memory.
struct DecodeParams {
  int layers = 4;
  int matmuls = 7;                  // q, k, v, o, gate, up, down
  int tiles = 4;
  int64_t tile_bytes = 64 << 10;
  int64_t activation_bytes = 4 << 10;
  int64_t memory_bytes = 512 << 10;
  int cores = 2;
  int64_t bytes_per_cycle = 16;     // weight DMA
  int compute_percent = 60;         // compute cycles as % of a tile's load cycles
  bool vary = true;                 // tile sizes and compute vary by matmul
};
Stream make_transformer_decode(const DecodeParams& params);

// Independent load -> compute tiles: load i (a[i] cycles) feeds program i (b[i] cycles).
// The two-stage flow shop that Johnson's rule solves (S. M. Johnson, NRLQ 1(1), 1954).
Stream make_tiles(const std::vector<int64_t>& load_cycles, const std::vector<int64_t>& compute_cycles,
                  int cores, int64_t memory_bytes);

}  // namespace ork::sched
