package dev.relayfarm.kernel.codegen;

/**
 * The thread pool every generated translation unit carries (C99 + POSIX threads + the GCC/Clang
 * {@code __atomic} builtins), instead of OpenMP's {@code parallel for}.
 *
 * <p>Why not OpenMP: at the end of a parallel region libgomp's caller waits at a barrier for every
 * thread of the team, including one the OS has not scheduled yet, and idle workers spin for a long
 * time before sleeping. On a machine that runs anything else — another inference engine in the same
 * process, a build — the spinning workers take the cores the running ones need and each region waits
 * for a time slice: shufflenet on 2 threads went from 30 ms to 290–415 ms that way.
 *
 * <p>This pool: {@code rf_parallel_for(fn, ctx, n)} cuts {@code [0, n)} into a few chunks per thread;
 * the caller publishes the job, wakes sleeping workers and runs chunks itself; workers claim chunks
 * with a compare-and-swap on one 64-bit word {@code (generation << 32) | next chunk}, so a worker that
 * wakes late finds nothing left and claims nothing of a later job (its CAS fails on the generation). Publishing a
 * job first moves the word to a closed generation with no chunk left, then writes the job's fields, then opens the
 * job's own generation: a worker that read the previous job's word cannot claim a chunk while the fields change
 * (it did, running a chunk twice and returning the job early, when the next job had more chunks; ParallelRuntimeRaceTest).
 * The caller waits only for chunks that were claimed and are running — never for a worker that did
 * not start. Idle workers spin about 200 µs (kernels of one inference run back to back), then sleep
 * on a condition variable. 20 µs was too short for the VM: between two parallel kernels of a dynamic model it
 * calls a shape function and a small serial kernel or two, 10 to 50 µs, so the workers slept and woke for
 * most regions (the OCR recognizer at width 160 on 2 threads: 7.34 ms, 6.74 ms with 200 µs); 200 µs is still far
 * below a time slice, so a pool idle between inferences gives its cores back quickly. Each library has its own pool:
 * two libraries run in turn, each right after the other, see the other's workers spin for up to 200 µs after each
 * region (benchmarks time each engine in blocks of runs for that reason, {@code SideBySide}). One job at a time per library: a second caller thread (two models of one
 * library run concurrently) or a nested loop runs its loop on its own thread. A destructor stops and
 * joins the workers, so unloading the library ({@code dlclose}) is safe.
 *
 * <p>Thread count: {@code rf_set_num_threads(n)} (exported; the Java runtime and the artifact's
 * {@code relayfarm_set_num_threads} call it), 0 = the online CPU count.
 */
final class ParallelRuntime {
    private ParallelRuntime() {}

    static final String SOURCE = """
            #include <pthread.h>
            #include <sched.h>
            #include <time.h>
            #include <unistd.h>
            typedef void (*rf_task)(void* ctx, int64_t begin, int64_t end);
            #define RF_MAX_WORKERS 255
            #define RF_CHUNKS_PER_THREAD 4
            #define RF_SPIN_NS 200000LL
            static struct {
                pthread_mutex_t mu; pthread_cond_t cv; pthread_mutex_t job_mu;
                uint64_t state;                  /* (generation << 32) | next chunk */
                rf_task fn; void* ctx; int64_t n, chunks, done;
                int requested, active, started, sleepers, stop;
                pthread_t workers[RF_MAX_WORKERS];
            } rf_pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
            static inline void rf_pause(void) {
            #if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
            #elif defined(__aarch64__)
                __asm__ __volatile__("yield");
            #endif
            }
            static int64_t rf_now_ns(void) {
                struct timespec t;
                clock_gettime(CLOCK_MONOTONIC, &t);
                return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
            }
            /* Runs unclaimed chunks of generation gen until none is left or a newer job replaced it. */
            static void rf_run_chunks(uint32_t gen) {
                for (;;) {
                    uint64_t s = __atomic_load_n(&rf_pool.state, __ATOMIC_ACQUIRE);
                    if ((uint32_t) (s >> 32) != gen) return;
                    int64_t c = (int64_t) (uint32_t) s, chunks = __atomic_load_n(&rf_pool.chunks, __ATOMIC_RELAXED);
                    if (c >= chunks) return;
                    rf_task fn = __atomic_load_n(&rf_pool.fn, __ATOMIC_RELAXED);
                    void* ctx = __atomic_load_n(&rf_pool.ctx, __ATOMIC_RELAXED);
                    int64_t n = __atomic_load_n(&rf_pool.n, __ATOMIC_RELAXED);
                    /* Success means chunk c of gen was unclaimed all along, so the job (and fn, ctx, n) is still gen's. */
                    if (!__atomic_compare_exchange_n(&rf_pool.state, &s, s + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
                    fn(ctx, c * n / chunks, (c + 1) * n / chunks);
                    __atomic_add_fetch(&rf_pool.done, 1, __ATOMIC_RELEASE);
                }
            }
            static void* rf_worker(void* arg) {
                int index = (int) (intptr_t) arg;
                uint32_t seen = (uint32_t) (__atomic_load_n(&rf_pool.state, __ATOMIC_ACQUIRE) >> 32);
                for (;;) {
                    int64_t since = rf_now_ns();
                    int spins = 0;
                    uint32_t gen;
                    while ((gen = (uint32_t) (__atomic_load_n(&rf_pool.state, __ATOMIC_ACQUIRE) >> 32)) == seen) {
                        if (__atomic_load_n(&rf_pool.stop, __ATOMIC_ACQUIRE)) return NULL;
                        rf_pause();
                        if (++spins % 64 == 0 && rf_now_ns() - since > RF_SPIN_NS) {
                            pthread_mutex_lock(&rf_pool.mu);
                            rf_pool.sleepers++;
                            while ((uint32_t) (__atomic_load_n(&rf_pool.state, __ATOMIC_ACQUIRE) >> 32) == seen && !rf_pool.stop)
                                pthread_cond_wait(&rf_pool.cv, &rf_pool.mu);
                            rf_pool.sleepers--;
                            pthread_mutex_unlock(&rf_pool.mu);
                            since = rf_now_ns();
                        }
                    }
                    seen = gen;
                    if (index < __atomic_load_n(&rf_pool.active, __ATOMIC_RELAXED)) rf_run_chunks(gen);
                }
            }
            __attribute__((destructor)) static void rf_pool_stop(void) {
                pthread_mutex_lock(&rf_pool.mu);
                __atomic_store_n(&rf_pool.stop, 1, __ATOMIC_RELEASE);
                pthread_cond_broadcast(&rf_pool.cv);
                pthread_mutex_unlock(&rf_pool.mu);
                for (int i = 0; i < rf_pool.started; i++) pthread_join(rf_pool.workers[i], NULL);
                rf_pool.started = 0;
            }
            __attribute__((visibility("default"))) void rf_set_num_threads(int n) {
                __atomic_store_n(&rf_pool.requested, n < 0 ? 0 : n, __ATOMIC_RELAXED);
            }
            static void rf_parallel_for(rf_task fn, void* ctx, int64_t n) {
                int threads = __atomic_load_n(&rf_pool.requested, __ATOMIC_RELAXED);
                if (threads <= 0) threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
                if (threads > RF_MAX_WORKERS + 1) threads = RF_MAX_WORKERS + 1;
                if (threads <= 1 || n <= 1 || pthread_mutex_trylock(&rf_pool.job_mu) != 0) { fn(ctx, 0, n); return; }
                while (rf_pool.started < threads - 1) {
                    if (pthread_create(&rf_pool.workers[rf_pool.started], NULL, rf_worker, (void*) (intptr_t) rf_pool.started) != 0) break;
                    rf_pool.started++;
                }
                int64_t chunks = (int64_t) threads * RF_CHUNKS_PER_THREAD;
                if (chunks > n) chunks = n;
                /* Close the finished job before touching its fields: a worker may have read its state (every chunk
                   claimed) and be about to compare chunks with the next job's; a generation of its own with no chunk
                   left makes that worker's claim fail instead of taking a chunk of a job half published. */
                uint32_t gen = (uint32_t) (__atomic_load_n(&rf_pool.state, __ATOMIC_RELAXED) >> 32) + 2;
                __atomic_store_n(&rf_pool.state, (uint64_t) (gen - 1) << 32 | 0xffffffffu, __ATOMIC_SEQ_CST);
                __atomic_store_n(&rf_pool.active, threads - 1, __ATOMIC_RELAXED);
                __atomic_store_n(&rf_pool.fn, fn, __ATOMIC_RELAXED);
                __atomic_store_n(&rf_pool.ctx, ctx, __ATOMIC_RELAXED);
                __atomic_store_n(&rf_pool.n, n, __ATOMIC_RELAXED);
                __atomic_store_n(&rf_pool.chunks, chunks, __ATOMIC_RELAXED);
                __atomic_store_n(&rf_pool.done, 0, __ATOMIC_RELAXED);
                __atomic_store_n(&rf_pool.state, (uint64_t) gen << 32, __ATOMIC_RELEASE);
                pthread_mutex_lock(&rf_pool.mu);
                if (rf_pool.sleepers > 0) pthread_cond_broadcast(&rf_pool.cv);
                pthread_mutex_unlock(&rf_pool.mu);
                rf_run_chunks(gen);
                for (int spins = 0; __atomic_load_n(&rf_pool.done, __ATOMIC_ACQUIRE) < chunks; spins++) {
                    if (spins < 4096) rf_pause(); else sched_yield();
                }
                pthread_mutex_unlock(&rf_pool.job_mu);
            }
            """;
}
