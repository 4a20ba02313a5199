/*
 * The JNI side of nicsim.mpi.Mpi: the few Open MPI calls the partitioned simulator makes between
 * windows (init, rank and size, an all-gather of byte buffers, an all-reduce of one long, finalize),
 * each on MPI_COMM_WORLD, and how a rank waits for them. Errors come back to Java as
 * IllegalStateException naming the call and Open MPI's error string.
 */
#include <dlfcn.h>
#include <jni.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * How a rank waits for a collective (Java_nicsim_mpi_Mpi_waiting): 0 in Open MPI's own blocking call,
 * which polls shared memory without a pause; 1 in a non-blocking one, tested a few thousand times, then
 * with the core yielded between tests, then sleeping between them (10 us, doubling up to 200 us). With
 * more runnable threads than cores (two JVMs on two cores, their GC and JIT threads, other tenants) a
 * rank that polls takes the core the rank it waits for needs; the sleeping costs a collective at most
 * about 200 us more once its peer has come.
 */
static int patient = 1;

#define SPINS 2000
#define YIELDS 200
#define NAP_FIRST_NS 10000L
#define NAP_MAX_NS 200000L

static void fail(JNIEnv *env, const char *call, int rc)
{
	char msg[MPI_MAX_ERROR_STRING + 64], text[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
		len = 0;
	text[len] = '\0';
	snprintf(msg, sizeof(msg), "%s failed: %s (error %d)", call, text, rc);
	jclass c = (*env)->FindClass(env, "java/lang/IllegalStateException");
	if (c)
		(*env)->ThrowNew(env, c, msg);
}

JNIEXPORT void JNICALL Java_nicsim_mpi_Mpi_init(JNIEnv *env, jclass cls)
{
	int done = 0, rc;

	(void)cls;
	/*
	 * The JVM loads this library with RTLD_LOCAL, so libmpi's symbols would stay hidden from the
	 * components Open MPI itself dlopens during MPI_Init: load libmpi again, globally, first.
	 */
	if (!dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL) && !dlopen("libmpi.so", RTLD_NOW | RTLD_GLOBAL)) {
		jclass c = (*env)->FindClass(env, "java/lang/IllegalStateException");
		if (c)
			(*env)->ThrowNew(env, c, dlerror());
		return;
	}
	MPI_Initialized(&done);
	if (done)
		return;
	rc = MPI_Init(NULL, NULL);
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Init", rc);
}

JNIEXPORT jint JNICALL Java_nicsim_mpi_Mpi_commRank(JNIEnv *env, jclass cls)
{
	int r = 0, rc = MPI_Comm_rank(MPI_COMM_WORLD, &r);

	(void)cls;
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Comm_rank", rc);
	return r;
}

JNIEXPORT jint JNICALL Java_nicsim_mpi_Mpi_commSize(JNIEnv *env, jclass cls)
{
	int n = 0, rc = MPI_Comm_size(MPI_COMM_WORLD, &n);

	(void)cls;
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Comm_size", rc);
	return n;
}

/* Waits for req as `patient` says; MPI_Test's error if it failed. */
static int wait_for(MPI_Request *req)
{
	struct timespec nap = { 0, NAP_FIRST_NS };
	int done = 0, tries = 0, rc;

	if (!patient)
		return MPI_Wait(req, MPI_STATUS_IGNORE);
	for (;;) {
		rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || done)
			return rc;
		tries++;
		if (tries < SPINS)
			continue;
		if (tries < SPINS + YIELDS) {
			sched_yield();
			continue;
		}
		nanosleep(&nap, NULL);
		nap.tv_nsec = nap.tv_nsec * 2 > NAP_MAX_NS ? NAP_MAX_NS : nap.tv_nsec * 2;
	}
}

/* 0: Open MPI's blocking calls (busy polling); 1: test, yield, then sleep between tests. */
JNIEXPORT void JNICALL Java_nicsim_mpi_Mpi_waiting(JNIEnv *env, jclass cls, jint how)
{
	(void)env;
	(void)cls;
	patient = how != 0;
}

/* op: 0 min, 1 max, 2 sum (nicsim.mpi.Mpi's constants). */
JNIEXPORT jlong JNICALL Java_nicsim_mpi_Mpi_allreduce(JNIEnv *env, jclass cls, jlong v, jint op)
{
	long long in = v, out = 0;
	MPI_Op o = op == 0 ? MPI_MIN : op == 1 ? MPI_MAX : MPI_SUM;
	MPI_Request req;
	int rc = MPI_Iallreduce(&in, &out, 1, MPI_LONG_LONG, o, MPI_COMM_WORLD, &req);

	(void)cls;
	if (rc == MPI_SUCCESS)
		rc = wait_for(&req);
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Iallreduce", rc);
	return out;
}

/*
 * Every rank's bytes, one after another in rank order, into a new array; lens (one int per rank)
 * receives each rank's length. Two collectives: the lengths, then the bytes.
 */
JNIEXPORT jbyteArray JNICALL Java_nicsim_mpi_Mpi_allgather(JNIEnv *env, jclass cls, jbyteArray mine, jintArray lens)
{
	int n = (*env)->GetArrayLength(env, lens), len = (*env)->GetArrayLength(env, mine), rc, i;
	int *counts = calloc(n, sizeof(int)), *displs = calloc(n, sizeof(int));
	jbyteArray all = NULL;
	jbyte *in = NULL, *out = NULL;
	long long total = 0;
	MPI_Request req;

	(void)cls;
	if (!counts || !displs)
		goto out;
	rc = MPI_Iallgather(&len, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD, &req);
	if (rc == MPI_SUCCESS)
		rc = wait_for(&req);
	if (rc != MPI_SUCCESS) {
		fail(env, "MPI_Iallgather", rc);
		goto out;
	}
	for (i = 0; i < n; i++) {
		displs[i] = (int)total;
		total += counts[i];
	}
	if (total > 0x7fffffff) {
		fail(env, "MPI_Allgatherv (more than 2 GiB in one window)", MPI_ERR_COUNT);
		goto out;
	}
	all = (*env)->NewByteArray(env, (jsize)total);
	if (!all)
		goto out;
	in = (*env)->GetByteArrayElements(env, mine, NULL);
	out = (*env)->GetByteArrayElements(env, all, NULL);
	if (!in || !out)
		goto out;
	rc = MPI_Iallgatherv(in, len, MPI_BYTE, out, counts, displs, MPI_BYTE, MPI_COMM_WORLD, &req);
	if (rc == MPI_SUCCESS)
		rc = wait_for(&req);
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Iallgatherv", rc);
	(*env)->SetIntArrayRegion(env, lens, 0, n, counts);
out:
	if (in)
		(*env)->ReleaseByteArrayElements(env, mine, in, JNI_ABORT);
	if (out)
		(*env)->ReleaseByteArrayElements(env, all, out, 0);
	free(counts);
	free(displs);
	return all;
}

JNIEXPORT void JNICALL Java_nicsim_mpi_Mpi_finish(JNIEnv *env, jclass cls)
{
	int done = 0, rc;

	(void)cls;
	MPI_Finalized(&done);
	if (done)
		return;
	rc = MPI_Finalize();
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Finalize", rc);
}
