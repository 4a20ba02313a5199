/*
 * An MPI job for UcxTest and MpiTest: ranks 0 and 1 ping-pong messages of 1 B to 1 MiB (each
 * size doubling), every byte of each checked on arrival; then every rank takes part in an
 * MPI_Allreduce of a vector whose sum is known. Rank 0 prints what it checked; the exit status
 * is 1 if any byte or sum was wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char expected(int size, int round, int i) {
	return (unsigned char)(size * 7 + round * 13 + i * 31 + 1);
}

int main(int argc, char **argv) {
	int rank, ranks, bad = 0, all_bad = 0, sizes = 0;
	enum { MAX = 1 << 20, ROUNDS = 3, VEC = 1000 };
	unsigned char *buf;
	double local[VEC], sum[VEC];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	buf = malloc(MAX);
	for (int size = 1; size <= MAX && rank < 2 && ranks > 1; size *= 2, sizes++)
		for (int round = 0; round < ROUNDS; round++) {
			if (rank == 0) {
				for (int i = 0; i < size; i++) buf[i] = expected(size, round, i);
				MPI_Send(buf, size, MPI_BYTE, 1, round, MPI_COMM_WORLD);
				memset(buf, 0, size);
				MPI_Recv(buf, size, MPI_BYTE, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				for (int i = 0; i < size; i++) bad += buf[i] != (unsigned char)~expected(size, round, i);
			} else {
				memset(buf, 0, size);
				MPI_Recv(buf, size, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				for (int i = 0; i < size; i++) {
					bad += buf[i] != expected(size, round, i);
					buf[i] = (unsigned char)~buf[i];
				}
				MPI_Send(buf, size, MPI_BYTE, 0, round, MPI_COMM_WORLD);
			}
		}
	for (int i = 0; i < VEC; i++) local[i] = rank * 1000.0 + i;
	MPI_Allreduce(local, sum, VEC, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < VEC; i++) /* sum over r of (1000 r + i) */
		bad += sum[i] != 1000.0 * ranks * (ranks - 1) / 2 + (double)i * ranks;
	MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("ping-pong: %d sizes from 1 B to 1 MiB, %d rounds each; allreduce over %d ranks; %d wrong\n", sizes, ROUNDS,
		       ranks, all_bad);
	free(buf);
	MPI_Finalize();
	return all_bad ? 1 : 0;
}
