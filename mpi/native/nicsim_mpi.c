/*
 * The JNI side of nicsim.mpi.Mpi: the few Open MPI calls the partitioned simulator makes between
 * windows (init, rank and size, an all-gather of byte buffers, an all-reduce of one long, finalize),
 * each on MPI_COMM_WORLD. Errors come back to Java as IllegalStateException naming the call and
 * Open MPI's error string.
 */
#include <dlfcn.h>
#include <jni.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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

/* op: 0 min, 1 max, 2 sum (nicsim.mpi.Mpi's constants). */
JNIEXPORT jlong JNICALL Java_nicsim_mpi_Mpi_allreduce(JNIEnv *env, jclass cls, jlong v, jint op)
{
	long long in = v, out = 0;
	MPI_Op o = op == 0 ? MPI_MIN : op == 1 ? MPI_MAX : MPI_SUM;
	int rc = MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, o, MPI_COMM_WORLD);

	(void)cls;
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Allreduce", rc);
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

	(void)cls;
	if (!counts || !displs)
		goto out;
	rc = MPI_Allgather(&len, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS) {
		fail(env, "MPI_Allgather", rc);
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
	rc = MPI_Allgatherv(in, len, MPI_BYTE, out, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS)
		fail(env, "MPI_Allgatherv", rc);
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
