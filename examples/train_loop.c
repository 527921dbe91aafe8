/*
 * train_loop.c - the bundled example: a training loop written in C that marks
 * its phases with plain NVTX in the gprof-dl domain (see gprof-dl-run(1)), with
 * a data-loading thread that prepares batches, and a few user ranges.
 *
 * It computes a small dense layer by hand so there is real work to profile.
 * Usage: train_loop [STEPS]
 */
#include "lib/collector/gprof-dl-nvtx.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BATCH 64
#define IN 256
#define OUT 128

static nvtxDomainHandle_t domain;
static float weights[IN * OUT], grad[IN * OUT];
static float batch[2][BATCH * IN];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int ready[2], stop;

static void push(uint32_t category, const char *name)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	nvtxDomainRangePushEx(domain, &a);
}

static void pop(void)
{
	nvtxDomainRangePop(domain);
}

/* The loader thread fills the two batch buffers in turn. */
static void *loader(void *arg)
{
	unsigned seed = 1;
	(void)arg;
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "loader");
	for (int k = 0;; k ^= 1) {
		pthread_mutex_lock(&lock);
		while (ready[k] && !stop)
			pthread_cond_wait(&ready_cv, &lock);
		pthread_mutex_unlock(&lock);
		if (stop)
			return NULL;
		nvtxRangePushA("decode_batch");
		for (int i = 0; i < BATCH * IN; i++)
			batch[k][i] = (float)(rand_r(&seed) % 1000) / 1000.0f;
		nvtxRangePop();
		pthread_mutex_lock(&lock);
		ready[k] = 1;
		pthread_cond_broadcast(&ready_cv);
		pthread_mutex_unlock(&lock);
	}
}

static void matmul(const float *x, float *y)
{
	push(GPROF_DL_CAT_OPERATOR, "linear");
	for (int b = 0; b < BATCH; b++)
		for (int o = 0; o < OUT; o++) {
			float s = 0;
			for (int i = 0; i < IN; i++)
				s += x[b * IN + i] * weights[i * OUT + o];
			y[b * OUT + o] = s > 0 ? s : 0;
		}
	pop();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	static float y[BATCH * OUT];
	pthread_t t;

	domain = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	for (int i = 0; i < IN * OUT; i++)
		weights[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
	pthread_create(&t, NULL, loader, NULL);
	nvtxRangePushA("training");
	for (int s = 0, k = 0; s < steps; s++, k ^= 1) {
		push(GPROF_DL_CAT_PROFILE_STEP, "ProfileStep");
		push(GPROF_DL_CAT_DATALOADER, "Dataloader");
		pthread_mutex_lock(&lock);
		while (!ready[k])
			pthread_cond_wait(&ready_cv, &lock);
		pthread_mutex_unlock(&lock);
		pop();
		push(GPROF_DL_CAT_FORWARD, "Forward");
		matmul(batch[k], y);
		pop();
		push(GPROF_DL_CAT_BACKWARD, "Backward");
		push(GPROF_DL_CAT_OPERATOR, "linear_grad");
		for (int i = 0; i < IN; i++)
			for (int o = 0; o < OUT; o++)
				grad[i * OUT + o] = batch[k][i] * y[o] * 1e-3f;
		pop();
		pop();
		push(GPROF_DL_CAT_OPTIMIZATION, "Optimization");
		for (int i = 0; i < IN * OUT; i++)
			weights[i] -= 0.01f * grad[i];
		pop();
		pthread_mutex_lock(&lock);
		ready[k] = 0;
		pthread_cond_broadcast(&ready_cv);
		pthread_mutex_unlock(&lock);
		pop();
		if (s % 5 == 4)
			nvtxMarkA("checkpoint");
	}
	nvtxRangePop();
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_cond_broadcast(&ready_cv);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
	printf("trained %d steps, w[0] = %.4f\n", steps, weights[0]);
	return 0;
}
