/* libork: the public C API.
 *
 * A device is opened by backend name; weights are made resident once (packed into the NPU's
 * native layout in a buffer object); C = A x W runs on 1 to 3 NPU cores, bit-exact with the
 * CPU reference. Every call returns an ork_status; on failure ork_last_error() names the
 * bad argument or the device condition (thread-local, valid until the next libork call on
 * the same thread). No call aborts or throws on bad input.
 *
 * Backends: "rknpu" (vendor kernel driver), "rocket" (mainline accel driver), "emu" (the
 * emulated NPU through the rknpu interface; "emu-rknpu" and "emu-rocket" name the interface),
 * "cpu" (CPU reference), "auto" (the first real NPU found, else "emu"). NULL or "default"
 * means $ORK_DEVICE when set, else "auto".
 *
 * Thread safety: one device may be used from many threads at once. Its calls are queued
 * (each device has a lock held for the whole device part of every call), so each returns
 * what it would alone. Not covered: closing a device, or destroying weights, while another
 * thread still uses them. Separate processes each have their own kernel file (on emu: their
 * own emulated NPU) and cannot see each other's memory. docs/library.md, "Threads".
 *
 * Handles: a handle passed after its ork_device_close, ork_weights_destroy, ork_job_release,
 * ork_batch_destroy, ork_model_close or ork_session_destroy to that function again, to
 * ork_job_wait, ork_batch_add_matmul / _submit, ork_model_get_info or ork_session_* is
 * refused without touching freed memory: ORK_E_INVALID_ARGUMENT, or for the void functions
 * nothing done and ork_last_error() naming it. Undefined, as a pointer after free() is in C:
 * other entry points given a released handle, and a released handle whose address a newer
 * handle of the same kind has taken (it names that one).
 */
#ifndef ORK_ORK_H
#define ORK_ORK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ORK_BUILDING_LIBRARY)
#define ORK_API __attribute__((visibility("default")))
#else
#define ORK_API
#endif

#define ORK_API_VERSION 6

typedef enum ork_status {
  ORK_OK = 0,
  ORK_E_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad shape, a bad option */
  ORK_E_UNSUPPORTED = 2,      /* valid, but this library or backend cannot run it */
  ORK_E_NO_DEVICE = 3,        /* no such backend or node, or it could not be opened */
  ORK_E_NO_MEMORY = 4,        /* host or device memory exhausted */
  ORK_E_DEVICE = 5,           /* an ioctl failed or the job faulted (DMA error) */
  ORK_E_TIMEOUT = 6,          /* the job timed out; the core was reset, the device is usable */
} ork_status;

typedef enum ork_dtype {
  ORK_DTYPE_INT8 = 1,  /* int8 A and W -> int32 C */
  ORK_DTYPE_FP16 = 2,  /* fp16 A and W (binary16 bit patterns) -> fp32 C, or fp16 C */
  ORK_DTYPE_INT4 = 3,  /* int4 W (packed) x int4 A (packed, W4A4) or int8 A (w4a8) -> int32 C */
  ORK_DTYPE_INT32 = 4, /* output only */
  ORK_DTYPE_FP32 = 5,  /* output only */
} ork_dtype;

typedef struct ork_device ork_device;
typedef struct ork_weights ork_weights;
typedef struct ork_stats ork_stats; /* defined in "Device facts and statistics" below */

typedef struct ork_device_info {
  char backend[16];          /* "rknpu", "rocket", "emu", "cpu" */
  char kernel_interface[16]; /* "rknpu", "rocket", or "" for cpu */
  char node[64];             /* device node, "" for cpu */
  char driver_version[32];   /* kernel driver version, "" for cpu */
  uint32_t hw_version;       /* rknpu GET_HW_VERSION, 0 when unknown */
  int32_t cores;             /* NPU cores (RK3588: 3); cpu: 3 as well, its cores option
                                meaning host threads (ork_stats.cpu_threads) */
  int32_t emulated;          /* 1 on the emulated NPU */
} ork_device_info;

/* Options of one matmul. Zero-initialise, then set what you need: zero means default. */
typedef struct ork_matmul_options {
  uint32_t struct_size; /* sizeof(ork_matmul_options), or 0 for the defaults */
  int32_t cores;        /* 1..3 NPU cores; 0 = all the device has */
  int32_t mc_cap;       /* cap on rows per M-tile (experiments); 0 = the bank limit */
  /* Added within API version 1 (a caller built before them passes a smaller struct_size and
     gets the defaults): */
  int32_t a_dtype;      /* dtype of A; 0 = the weights' dtype. ORK_DTYPE_INT8 with INT4
                           weights = w4a8 (weights widened to int8 on the device) */
  int32_t c_dtype;      /* dtype of C; 0 = int32 (int8/int4 weights) or fp32 (fp16).
                           ORK_DTYPE_FP16 with fp16 weights = fp16 C (round to nearest even) */
  /* Since API version 2: */
  uint32_t core_mask;   /* which cores the call may use: bit i = core i; 0 = `cores`
                           (cores 0..cores-1). Bits at or beyond the device's core count are
                           ORK_E_INVALID_ARGUMENT naming the mask; with a mask, `cores` must
                           be 0 or its bit count. The plan uses at most popcount(mask) cores */
  ork_stats* stats;     /* filled with this call's figures (see ork_stats); NULL = none */
} ork_matmul_options;

ORK_API const char* ork_version(void);
ORK_API const char* ork_status_string(ork_status status);
ORK_API const char* ork_last_error(void);

ORK_API ork_status ork_device_open(const char* name, ork_device** out);
ORK_API void ork_device_close(ork_device* device);
ORK_API ork_status ork_device_get_info(const ork_device* device, ork_device_info* info);

/* Makes K x N row-major weights resident on the device, packed once into the native layout.
 * `data` is int8_t[K*N] for ORK_DTYPE_INT8, uint16_t[K*N] binary16 bit patterns for
 * ORK_DTYPE_FP16, and ceil(K*N/2) bytes of packed int4 for ORK_DTYPE_INT4 (two's complement
 * -8..7; element i = k*N + n in the low nibble of byte i/2 when i is even, else the high one).
 * The device must outlive the weights. docs/dtypes.md has layouts, limits and arithmetic. */
ORK_API ork_status ork_weights_create(ork_device* device, ork_dtype dtype, int64_t k, int64_t n,
                                      const void* data, ork_weights** out);
ORK_API void ork_weights_destroy(ork_weights* weights);

/* C = A x W. A is M x K row-major of options->a_dtype (default: the weights' dtype; int4 A is
 * packed like int4 weights, ceil(M*K/2) bytes); C is M x N row-major int32 (int8 and int4
 * weights) or fp32 / fp16 (fp16 weights, by options->c_dtype). Bit-exact with the CPU
 * reference on every backend. `options` may be NULL. Bad combinations (e.g. int8 A with fp16
 * weights, fp16 C with int8 weights) are ORK_E_INVALID_ARGUMENT naming both dtypes. */
ORK_API ork_status ork_matmul(ork_device* device, const ork_weights* weights, const void* a,
                              int64_t m, void* c, const ork_matmul_options* options);

/* ---- Device buffers and tensors (API 2; docs/library.md "Buffers and tensors") ------------
 * An ork_buffer is memory of one device (a buffer object of its kernel interface; plain host
 * memory on "cpu") that the caller maps once and passes as A or C through an ork_tensor, so
 * activations stay in one place between calls with nothing copied by the engine. The library
 * does the cache maintenance around its own accesses. The device must outlive its buffers. */
typedef struct ork_buffer ork_buffer;

/* A buffer of `bytes` (>= 1) bytes on `device`, zero-filled. */
ORK_API ork_status ork_buffer_create(ork_device* device, size_t bytes, ork_buffer** out);
/* The CPU mapping of the whole buffer, valid until ork_buffer_destroy. */
ORK_API ork_status ork_buffer_map(ork_buffer* buffer, void** ptr);
/* The size asked for at create / import (0 for NULL). */
ORK_API size_t ork_buffer_size(const ork_buffer* buffer);
/* dma-buf sharing (PRIME on both kernel interfaces, emulated on emu): export gives a new
 * dma-buf fd of the buffer (close-on-exec, read-write), the caller's to close; import makes a
 * buffer of `bytes` over a dma-buf fd from any device or process (the caller keeps `fd`; a
 * dma-buf smaller than `bytes`, a bad fd, or one this device already holds as a buffer are
 * ORK_E_INVALID_ARGUMENT). The library brackets its CPU accesses to a shared buffer with
 * DMA_BUF_IOCTL_SYNC. "cpu" has no kernel interface: ORK_E_UNSUPPORTED. */
ORK_API ork_status ork_buffer_export_dmabuf(ork_buffer* buffer, int* fd);
ORK_API ork_status ork_buffer_import_dmabuf(ork_device* device, int fd, size_t bytes, ork_buffer** out);
/* Refused (ORK_E_INVALID_ARGUMENT, the buffer stays valid) while a call or job uses it. NULL is a no-op. */
ORK_API ork_status ork_buffer_destroy(ork_buffer* buffer);

/* One operand of a matmul: host memory (`host`), or a buffer of the call's device
 * (`buffer`); exactly one of the two is set. The first element is `offset_bytes` past the
 * start; rows start `row_stride` elements apart (0 = dense: the operand's own row length).
 * int4 operands count nibbles (element i of a row at nibble row * row_stride + i). Writing C
 * into columns [c0, c0 + N) of a wider M x W matrix: row_stride = W, offset_bytes = c0 times
 * the element size. Every element of the operand must lie inside the buffer. */
typedef struct ork_tensor {
  void* host;
  ork_buffer* buffer;
  size_t offset_bytes;
  int64_t row_stride;
} ork_tensor;

/* ork_matmul on tensors: A is M x K, C is M x N, dtypes as ork_matmul. Element pointers must
 * be aligned to their element size. ork_matmul(d, w, a, m, c, o) is ork_matmul_t with two
 * dense host tensors. */
ORK_API ork_status ork_matmul_t(ork_device* device, const ork_weights* weights, const ork_tensor* a,
                                int64_t m, const ork_tensor* c, const ork_matmul_options* options);

/* ---- Quantised matmul (API 1; docs/quantisation.md) ----------------------------------------
 * fp32 in, fp32 out. Weights are quantised once (symmetric, one scale per output column,
 * per-channel or per group of 32/64/128 along K) to int8 or int4 codes; each call quantises A
 * (symmetric, one scale per tensor or per row), runs one int32 matmul per K-group on the
 * device and dequantises on the host. Modes: w8a8, w4a8 (int4 codes, two per byte in host
 * memory, widened to int8 for the NPU) and w4a4. Every backend returns the bytes of the CPU
 * reference: round half to even, codes clamped to [-127, 127] / [-7, 7], scale = absmax / qmax
 * (0 for an all-zero group), C = (sum over groups, in increasing order, of
 * (float)acc_g * w_scale[g][n]) * a_scale[m], each step one fp32 operation. */
typedef struct ork_qweights ork_qweights;

typedef struct ork_quant_options {
  uint32_t struct_size; /* sizeof(ork_quant_options), or 0 for the defaults */
  int32_t weight_bits;  /* 8 or 4; 0 = 8 */
  int32_t group;        /* 0 = per-channel; 32, 64 or 128 along K (a shorter last group when
                           K is not a multiple: it gets its own scales) */
} ork_quant_options;

typedef struct ork_qmatmul_options {
  uint32_t struct_size;    /* sizeof(ork_qmatmul_options), or 0 for the defaults */
  int32_t activation_bits; /* 8 or 4; 0 = 8. 4 needs 4-bit weights (w4a4) */
  int32_t per_row;         /* 1 = one activation scale per row of A; 0 = one per tensor */
  int32_t cores;           /* 1..3 NPU cores; 0 = all the device has */
  /* Since API version 4 (older callers pass a smaller struct_size and get NULL): */
  ork_stats* stats;        /* filled with this call's figures, summed over its K-groups'
                              matmuls (see ork_stats; calls = 1); NULL = none */
} ork_qmatmul_options;

/* Quantises K x N row-major fp32 weights (finite; else the first bad [k][n] is named) and
 * makes them resident. `options` may be NULL (w8, per-channel). Per-channel needs K <= 131072. */
ORK_API ork_status ork_qweights_create(ork_device* device, const float* w, int64_t k, int64_t n,
                                       const ork_quant_options* options, ork_qweights** out);
/* The same from codes an engine already has: int8_t[K*N] for 8 bits, or ceil(K*N/2) bytes of
 * int4 (element i = k*N + n in the low nibble of byte i/2 when i is even, else the high one),
 * and float scales[groups][N], groups = 1 (per-channel) or ceil(K/group). Codes outside
 * [-127, 127] / [-7, 7] and negative or non-finite scales are refused. */
ORK_API ork_status ork_qweights_import(ork_device* device, const void* codes, const float* scales,
                                       int64_t k, int64_t n, const ork_quant_options* options,
                                       ork_qweights** out);
/* Copies the codes (same format as import; `codes_bytes` must be at least that size) and the
 * scales (`scale_count` >= groups * N); either pointer may be NULL to skip it. */
ORK_API ork_status ork_qweights_export(const ork_qweights* weights, void* codes, size_t codes_bytes,
                                       float* scales, size_t scale_count);
/* Number of scale rows: 1 (per-channel) or ceil(K / group). */
ORK_API int64_t ork_qweights_groups(const ork_qweights* weights);
ORK_API void ork_qweights_destroy(ork_qweights* weights);

/* C (M x N fp32) = dequant(quant(A) x Wq). A is M x K row-major fp32, all finite.
 * `options` may be NULL (8-bit per-tensor activations, all cores). */
ORK_API ork_status ork_qmatmul(ork_device* device, const ork_qweights* weights, const float* a,
                               int64_t m, float* c, const ork_qmatmul_options* options);

/* ---- Device facts and statistics (API version 2; docs/library.md "Statistics") --------------
 * Output structs follow the struct_size rule too: set struct_size = sizeof(the struct) before
 * the call (0 is ORK_E_INVALID_ARGUMENT). A smaller struct_size (an older caller) gets only the
 * fields that fit; a larger one (a newer caller) gets the fields this library knows and the
 * rest untouched. Either way the call writes back struct_size = the bytes it filled. */

typedef struct ork_memory_info {
  uint32_t struct_size;
  uint32_t exact;                    /* 1: the kernel's own figures (the emulator's fake kernel);
                                        0: estimated from this process's buffers (real kernels:
                                        neither uAPI reports its IOMMU window) */
  uint64_t bytes_resident;           /* bytes this device holds: NPU backends, the page-rounded
                                        buffers of its weights and cached contexts; cpu, the
                                        host bytes of its packed weights */
  uint64_t window_free_bytes;        /* free bytes of the NPU's 4 GiB address window (IOVAs are
                                        32-bit); rknpu estimate: 4 GiB - bytes_resident, an upper
                                        bound (other processes share the vendor's one domain);
                                        rocket: a domain per open file. 0 on cpu */
  uint64_t largest_allocation_bytes; /* the largest buffer that may be created now: the largest
                                        free window range (emulator) or window_free_bytes
                                        (estimate), capped by available host memory (the NPU
                                        works in host DRAM); cpu: available host memory */
  uint64_t window_bytes;             /* the window itself: 4 GiB (emulator: its IOVA range) */
  uint64_t context_bytes;            /* of bytes_resident, held by cached contexts */
  uint64_t context_capacity_bytes;   /* their bound (ORK_CONTEXT_CACHE_BYTES) */
  uint64_t weight_cache_bytes;       /* emulator: host bytes of this device's prepared weights */
  uint64_t weight_cache_capacity_bytes; /* their bound (ORK_EMU_WEIGHT_CACHE_BYTES); 0 elsewhere */
} ork_memory_info;

/* Cumulative per device (ork_device_get_stats) or one call's (ork_matmul_options.stats).
 * Times in ns of host wall clock unless said; only calls that returned ORK_OK count. */
typedef struct ork_stats {
  uint32_t struct_size;
  uint32_t reserved;            /* 0 */
  uint64_t calls;               /* matmul calls completed */
  uint64_t pack_ns;             /* A into the NPU's native layout + cache sync to the device */
  uint64_t submit_ns;           /* in the submit ioctl(s). rknpu's SUBMIT blocks until the job
                                   is done, so there it includes device_ns */
  uint64_t device_ns;           /* the device's execution time as reported: rknpu
                                   hw_elapse_time; the emulator's modelled time (0 with a PC
                                   that does no work); cpu: the reference multiply. Not reported
                                   by rocket (see device_unknown_calls) */
  uint64_t wait_ns;             /* waiting for completion after the submit ioctl returned
                                   (rocket: PREP_BO on the output buffers) */
  uint64_t unpack_ns;           /* outputs synced back, K-slices summed, C unpacked */
  uint64_t bytes_to_device;     /* bytes synced for the device (feature buffers) */
  uint64_t bytes_from_device;   /* bytes synced back (output slots) */
  uint64_t context_builds;      /* calls that planned and built a context (command lists) */
  uint64_t context_hits;        /* calls that found their context cached */
  uint64_t weight_cache_hits;   /* emulator: weight blocks found prepared (one per task) */
  uint64_t weight_cache_misses; /* emulator: weight blocks gathered and prepared again */
  uint64_t wall_ns;             /* the whole call inside libork; host time = wall_ns - device_ns */
  uint64_t plan_ns;             /* context lookup, or plan + build on a miss */
  uint64_t submits;             /* submit ioctls */
  uint64_t device_unknown_calls; /* calls whose device time the kernel does not report */
  uint64_t context_evictions;   /* contexts dropped by the cache's byte bound */
  /* Since API version 4: */
  uint64_t emulator_ns;         /* emulator: host ns its NPU model spent executing the jobs (the
                                   arithmetic, on this CPU); 0 elsewhere. With ORK_EMU_TIMING=
                                   fast, wall_ns - emulator_ns is the library's own host cost */
  /* Since API version 5: */
  uint64_t cpu_threads;         /* cpu: host threads the reference multiply ran on (the cores
                                   option or core_mask's bits; 0 = as the shape needs, up to the
                                   online CPUs, every dtype by one rule; ork_qmatmul: the most
                                   of its K-groups' multiplies). One call's: its threads; cumulative:
                                   the sum over calls, so cpu_threads / calls is the mean.
                                   0 elsewhere */
} ork_stats;

ORK_API ork_status ork_device_memory(ork_device* device, ork_memory_info* info);
ORK_API ork_status ork_device_get_stats(ork_device* device, ork_stats* stats);
ORK_API ork_status ork_device_reset_stats(ork_device* device);
/* ---- Weights in the layouts engines hold (API 2; docs/library.md "Engine layouts") -------
 * K x N or N x K (the ggml and PyTorch nn.Linear layout: row n holds output n's K inputs),
 * with a row stride, packed straight into the NPU's native layout; bit-exact with
 * ork_weights_create of the same values as dense K x N. */
typedef enum ork_layout {
  ORK_LAYOUT_K_BY_N = 0, /* element (k, n) at k * stride + n; stride >= N */
  ORK_LAYOUT_N_BY_K = 1, /* element (k, n) at n * stride + k; stride >= K */
} ork_layout;

typedef struct ork_weights_desc {
  uint32_t struct_size; /* sizeof(ork_weights_desc); 0 is refused */
  ork_dtype dtype;      /* ORK_DTYPE_INT8, ORK_DTYPE_FP16 or ORK_DTYPE_INT4 */
  int64_t k, n;         /* the weights are K x N whatever the layout */
  int32_t layout;       /* ORK_LAYOUT_K_BY_N (0) or ORK_LAYOUT_N_BY_K (1) */
  int64_t row_stride;   /* elements between row starts of `layout` (int4: nibbles); 0 = dense */
  /* int8_t / uint16_t (fp16 bit patterns) elements, or for int4 a nibble stream: element
   * (row, col) of the layout is nibble i = row * stride + col, the low nibble of byte i/2 when
   * i is even, else the high one (two's complement -8..7; an odd stride starts every other row
   * mid-byte). The buffer spans (rows - 1) * stride + row length elements. */
  const void* data;
} ork_weights_desc;

ORK_API ork_status ork_weights_create_ex(ork_device* device, const ork_weights_desc* desc, ork_weights** out);

/* Packed-weight export / import: the weights' NPU-native packed bytes behind a versioned,
 * checksummed header (format: docs/dtypes.md "Packed-weight blobs"). Every backend writes and
 * reads the NPU layout, so a blob moves between cpu, emu and NPU devices; on an NPU import
 * copies the payload into the weight buffer with no repacking (the cpu backend unpacks it).
 * Export: `blob` NULL = a query: *size = the bytes needed, ORK_OK. A capacity smaller than
 * that is ORK_E_INVALID_ARGUMENT with *size = the bytes needed. Import refuses a truncated or
 * corrupted blob, another header or layout version, a bad dtype or shape, naming which. */
ORK_API ork_status ork_weights_export_packed(const ork_weights* weights, void* blob, size_t capacity, size_t* size);
ORK_API ork_status ork_weights_import_packed(ork_device* device, const void* blob, size_t size, ork_weights** out);

/* ggml block formats imported exactly (API 2; docs/quantisation.md "ggml blocks"). `blocks` is a
 * ggml weight tensor as ggml stores it: N rows (output features), each K / 32 blocks along K
 * (K must be a multiple of 32; `bytes` must be N * K/32 * the block size: 18 Q4_0, 20 Q4_1,
 * 34 Q8_0, 36 Q8_1). Q4_0 (value (q - 8) * d, codes -8..7, any sign of d) and Q4_1 (q * d + m)
 * give 4-bit weights (w4a8 and w4a4), Q8_0 / Q8_1 (q * d; Q8_1's s is not needed) 8-bit
 * weights, all with one scale per block of 32 (ork_qweights_groups = K / 32). ork_qmatmul on
 * them equals the reference arithmetic of that chapter on every backend. Non-finite d or m
 * are refused naming the row and block. ork_qweights_export gives the codes as stored (Q4_1:
 * q - 8) and the d scales (not Q4_1's m). */
#define ORK_GGML_Q4_0 2
#define ORK_GGML_Q4_1 3
#define ORK_GGML_Q8_0 8
#define ORK_GGML_Q8_1 9
ORK_API ork_status ork_qweights_import_ggml(ork_device* device, int32_t ggml_type, const void* blocks, size_t bytes,
                                            int64_t k, int64_t n, ork_qweights** out);

/* API 6 (docs/library.md "Device memory"): bytes of the NPU-native copy of K x N weights, before they exist. */
ORK_API ork_status ork_weights_packed_bytes(ork_dtype dtype, int64_t k, int64_t n, uint64_t* bytes);
ORK_API ork_status ork_qweights_packed_bytes(int64_t k, int64_t n, const ork_quant_options* options, uint64_t* bytes);

/* ---- Asynchronous jobs and batches (API 3; docs/library.md "Asynchronous jobs and batches")
 * ork_matmul_submit checks a matmul as ork_matmul_t does, packs A, hands the work to the
 * device and returns a job at once; ork_job_wait completes it, ork_job_release frees it.
 * Several jobs may be in flight on a device; they complete in submission order (waiting on a
 * job completes the ones submitted before it). A is read during the submit: its memory may
 * be reused as soon as the submit returns. C (and options.stats) is written at completion,
 * so it must stay valid until the job was waited or released. The next call's host work
 * (packing its A) overlaps the device's work on the previous ones. A new call on the same
 * (weights, M, options) as a job in flight first completes that job (they share device
 * buffers). On "cpu" the work is done inside the submit: the job is born complete.
 * Errors name the entry point. */
typedef struct ork_job ork_job;

ORK_API ork_status ork_matmul_submit(ork_device* device, const ork_weights* weights, const ork_tensor* a,
                                     int64_t m, const ork_tensor* c, const ork_matmul_options* options,
                                     ork_job** out);
/* Completes `job` within `timeout_ms` (-1: until it ends). Returns the job's outcome: ORK_OK
 * (C written), or its failure (ORK_E_TIMEOUT naming "failed on the device": the job overran
 * the device's job timeout, its cores were reset, the device stays usable; ORK_E_DEVICE: a
 * fault). ORK_E_TIMEOUT naming "still in flight": timeout_ms ran out first; the job goes on
 * and may be waited again. A job is waited once: a second wait is ORK_E_INVALID_ARGUMENT,
 * as is a job whose device was closed before its wait (the close waited for it on the
 * device and discarded its result). */
ORK_API ork_status ork_job_wait(ork_job* job, int64_t timeout_ms);
/* Frees `job`; one still in flight is first completed on the device, its C left unwritten.
 * Valid after the device was closed. NULL is a no-op. */
ORK_API void ork_job_release(ork_job* job);

/* A batch: matmuls submitted together as one kernel job, their tasks chained per NPU core
 * (a layer's q/k/v, gate/up, or a whole layer's independent matmuls). The first
 * ork_batch_submit after an add records the plans and command lists; later submits replay
 * them: only A's contents (read at each submit) change, nothing is planned or emitted again.
 * The tensors are fixed at ork_batch_add_matmul and held by the batch (their buffers cannot
 * be destroyed while it lives). The matmuls of one batch must not depend on each other (all
 * A are read before any C is written). A submit while the batch's previous job is in flight
 * first completes that job. A matmul whose wide K needs several kernel submits is refused at
 * the first submit (ORK_E_UNSUPPORTED): run it with ork_matmul_submit. options.stats must be
 * NULL in a batch (its job is counted in the device's statistics). Destroying weights a
 * batch uses makes it refuse later submits. */
typedef struct ork_batch ork_batch;

ORK_API ork_status ork_batch_create(ork_device* device, ork_batch** out);
ORK_API ork_status ork_batch_add_matmul(ork_batch* batch, const ork_weights* weights, const ork_tensor* a,
                                        int64_t m, const ork_tensor* c, const ork_matmul_options* options);
ORK_API ork_status ork_batch_submit(ork_batch* batch, ork_job** out);
/* Completes the batch's job in flight, if any, then frees the batch. NULL is a no-op. */
ORK_API void ork_batch_destroy(ork_batch* batch);

/* ---- Streamed models (API 3; docs/execution.md, docs/library.md "Streamed models") --------
 * A packed model file (written by ork_pack) whose weights need not fit in memory: a session
 * streams each tensor from the file into device buffers under a byte budget, in the order
 * the stream reorderer chose, and runs the chain of matmuls of one token step at a time.
 * Activations between matmuls follow docs/execution.md "Activations" (int8 / int4 codes one
 * per byte for integer models, binary16 for fp16 ones). A session is used from one thread
 * at a time; it holds its device's queue while a token runs. */
typedef struct ork_model ork_model;
typedef struct ork_session ork_session;

typedef enum ork_order {
  ORK_ORDER_SCHEDULED = 0,  /* the list scheduler's order (prefetch under the budget) */
  ORK_ORDER_FIFO = 1,       /* the list scheduler with input-order priority */
  ORK_ORDER_SEQUENTIAL = 2, /* load a tensor, multiply, then the next: no overlap */
} ork_order;

typedef struct ork_model_info {
  uint32_t struct_size;         /* sizeof(ork_model_info) */
  int32_t dtype;                /* ORK_DTYPE_INT8, ORK_DTYPE_INT4 or ORK_DTYPE_FP16 */
  int64_t hidden;               /* width of a token's input and output */
  int32_t layers;
  int32_t matmuls_per_layer;
  uint64_t weight_bytes;        /* all packed tensors */
  uint64_t largest_layer_bytes; /* the smallest budget a session accepts (4 KiB-rounded) */
} ork_model_info;

typedef struct ork_session_options {
  uint32_t struct_size;  /* sizeof(ork_session_options), or 0 for the defaults */
  uint64_t budget_bytes; /* weight buffers at most; 0 = 512 MiB */
  int64_t m;             /* rows per token step: 1 decode (default), up to 4096 prefill */
  int32_t order;         /* an ork_order; default ORK_ORDER_SCHEDULED */
  int32_t cores;         /* NPU cores per matmul, 1..3; 0 = all the device has */
} ork_session_options;

/* Opens and checks a packed model (header, version, checksums, every tensor present and
 * 4 KiB aligned, shapes that chain); the errors name the problem. */
ORK_API ork_status ork_model_open(const char* path, ork_model** out);
ORK_API ork_status ork_model_get_info(const ork_model* model, ork_model_info* info);
ORK_API void ork_model_close(ork_model* model);

/* Plans the session: a budget below the largest layer is ORK_E_INVALID_ARGUMENT. The session
 * holds its model and device: the model may be closed first (the session keeps it until it
 * is destroyed); after ork_device_close a token step is refused (ORK_E_INVALID_ARGUMENT). */
ORK_API ork_status ork_session_create(ork_device* device, const ork_model* model,
                                      const ork_session_options* options, ork_session** out);
/* Runs one token step. `input`: m x hidden activations (int8_t per element for integer
 * models, binary16 for fp16), `input_bytes` their size; NULL = the model's synthetic input
 * of token 0 (docs/execution.md "Synthetic models"). */
ORK_API ork_status ork_session_run_token(ork_session* session, const void* input, size_t input_bytes);
/* The last token step's output (m x hidden, the input's format) into `out`; `*size` gets
 * its bytes (also when `capacity` is too small, which is ORK_E_INVALID_ARGUMENT). */
ORK_API ork_status ork_session_read_output(const ork_session* session, void* out, size_t capacity, size_t* size);
ORK_API void ork_session_destroy(ork_session* session);

#ifdef __cplusplus
}
#endif

#endif /* ORK_ORK_H */
