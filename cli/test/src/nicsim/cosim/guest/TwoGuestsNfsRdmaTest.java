package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import nicsim.serve.Served;
import nicsim.sim.Counters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel file-system ULP across the simulated fabric: NFSv4.1 over RDMA. Guest 0 runs the kernel's nfsd with an
 * RPC-over-RDMA listener (svcrdma, "rdma 20049" in /proc/fs/nfsd/portlist) exporting a tmpfs, with Debian's
 * exportfs and rpc.mountd answering the kernel's export upcalls; guest 1 mounts it with Debian's mount.nfs4 over
 * xprtrdma, whose fast-registered MRs carry the RPC's xid in their iova's top 32 bits (the adapter's UMR takes the
 * start address). Random bytes written, the page cache dropped, read back; md5 equal on both sides. RDMA CM resolves
 * the server's address through IPoIB, so ib0 comes up first, as in {@link TwoGuestsIpoibTest}.
 */
class TwoGuestsNfsRdmaTest {
    @TempDir Path share;

    /** How many MiB the client writes and reads back. */
    static final int MIB = 4;

    /**
     * The server: NFSv4 only (v2 and v3 off, so neither nfsd nor mountd registers with rpcbind, which the guest
     * does not run), a lease and grace period of 10 s (the least nfsd takes: a fresh server refuses OPENs until its
     * grace ends), the RDMA listener, then the threads. When the client is done it prints the file's checksum and
     * takes it all down.
     */
    static String server() {
        String d = "/proc/fs/nfsd";
        return TwoGuestsNvmeofTest.ib0(0) + String.join("\n",
                "modprobe nfsd && modprobe rpcrdma || echo NO_NFSD",
                "mkdir -p /export /var/lib/nfs/v4recovery /run/rpc_pipefs",
                "mount -t tmpfs -o size=" + 4 * MIB + "m tmpfs /export && chmod 1777 /export",
                "grep -q ' " + d + " ' /proc/mounts || mount -t nfsd nfsd " + d,
                "echo '/export 192.168.77.0/24(rw,sync,no_root_squash,no_subtree_check,insecure,fsid=0)' \\",
                "  > /etc/exports",
                "exportfs -ra; echo EXPORTFS=$?; exportfs -v",
                "rpc.mountd -N 2 -N 3 -F > /tmp/mountd.log 2>&1 & m=$!",
                "echo 10 > " + d + "/nfsv4leasetime; echo 10 > " + d + "/nfsv4gracetime",
                "echo '-2 -3 +4 +4.1' > " + d + "/versions; echo VERSIONS=$(cat " + d + "/versions)",
                "echo 'rdma 20049' > " + d + "/portlist; echo PORTLIST=$?",
                "echo 4 > " + d + "/threads; echo THREADS=$(cat " + d + "/threads)",
                "echo LISTENERS=$(cat " + d + "/portlist | tr '\\n' ' ')",
                "xchg 7500 ready > /dev/null",
                "bounded 400 xchg 7510 finished > /dev/null   # the client has unmounted",
                "echo SERVED=$(md5sum < /export/data | cut -d' ' -f1) SERVED_SIZE=$(wc -c < /export/data)",
                "cat /tmp/mountd.log; dmesg | grep -iE 'nfs|rpc|svcrdma|nicsim' | tail -30",
                "echo 0 > " + d + "/threads; kill $m; wait $m; exportfs -ua",
                "umount " + d + "; umount /export",
                "i=0; until rmmod nfsd rpcrdma 2>/dev/null; do i=$((i + 1)); [ $i -gt 30 ] && break; sleep 1; done",
                "echo SERVER_RMMOD=$(lsmod | grep -cE '^(nfsd|rpcrdma) ')", "exit 0", "");
    }

    /**
     * Pages a fast-registration MR maps, which the client's driver is reloaded with: xprtrdma takes at most 16 MRs
     * for a chunk list and wants them to cover its 256 data pages and 2 more, so an MR of 6 pages (the driver's
     * default) makes its transport refuse the device (mount.nfs4: "Cannot allocate memory").
     */
    static final int FR_PAGES = 17;

    /**
     * The client: nicsim_ib reloaded with fr_pages=FR_PAGES, then mount.nfs4 with proto=rdma on the server's ib0
     * address, MIB MiB of random bytes written with fsync, the page cache dropped (so the read crosses the fabric),
     * read back; then unmount and unload.
     */
    static String client() {
        return String.join("\n",
                "rmmod nicsim_ib && modprobe nicsim_ib fr_pages=" + FR_PAGES + " || echo NO_RELOAD",
                "i=0; until [ -e /sys/class/net/ib0 ]; do i=$((i + 1)); [ $i -gt 60 ] && break; sleep 1; done",
                "echo FR_PAGES=$(cat /sys/module/nicsim_ib/parameters/fr_pages)", "")
                + TwoGuestsNvmeofTest.ib0(1) + String.join("\n",
                "modprobe nfsv4 && modprobe rpcrdma || echo NO_NFS",
                "mkdir -p /mnt/nfs",
                "xchg 7500 ready > /dev/null",
                "bounded 120 mount.nfs4 192.168.77.1:/ /mnt/nfs -o vers=4.1,proto=rdma,port=20049; echo MOUNT=$?",
                "grep ' /mnt/nfs ' /proc/mounts",
                "if grep -q ' /mnt/nfs ' /proc/mounts; then",
                "  echo PROTO=$(grep ' /mnt/nfs ' /proc/mounts | grep -o 'proto=[a-z]*' | cut -d= -f2)",
                Guests.writeReadBack("/mnt/nfs/data", MIB, 180),
                "  grep -A3 xprt: /proc/self/mountstats | head -4",
                "  bounded 60 umount /mnt/nfs; echo UMOUNT=$?",
                "else echo NO_MOUNT; fi",
                "dmesg | grep -iE 'nfs|rpc|nicsim' | tail -30",
                "xchg 7510 finished > /dev/null",
                "i=0; until rmmod rpcrdma nfsv4 2>/dev/null; do i=$((i + 1)); [ $i -gt 30 ] && break; sleep 1; done",
                "echo CLIENT_RMMOD=$(lsmod | grep -cE '^(nfsv4|rpcrdma) ')", "exit 0", "");
    }

    @Test void nfsOverRdmaCarriesAFileBetweenTwoGuests() throws Exception {
        Served served = new Served("two-guests-nfs").start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            ran = Guests.run(served, share, null, 480, server(), client());
            Guests.awaitBothLeft(served);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        String server = ran.get(0).console(), client = ran.get(1).console();
        assertTrue(server.contains("PORTLIST=0") && server.contains("rdma 20049"),
                "nfsd listens for RPC-over-RDMA on 20049: " + server);
        assertEquals(String.valueOf(FR_PAGES), Guests.value(client, "FR_PAGES"), "the client's driver was reloaded");
        assertTrue(client.contains("MOUNT=0"), "mount.nfs4 mounted the export over RDMA: " + client);
        assertEquals("rdma", Guests.value(client, "PROTO"), "the mount's transport");
        String sent = Guests.value(client, "SENT");
        assertTrue(client.contains("WRITE=0"), "the client wrote the file: " + client);
        assertEquals(sent, Guests.value(client, "READ_BACK"), "the client read back what it wrote through the fabric");
        assertEquals(sent + " SERVED_SIZE=" + (MIB << 20), Guests.value(server, "SERVED"),
                "the server's tmpfs holds what the client wrote, and no more");
        assertTrue(client.contains("UMOUNT=0"), "the client unmounted cleanly: " + client);
        assertEquals("0", Guests.value(client, "CLIENT_RMMOD"), "the client unloaded nfsv4 and rpcrdma");
        assertEquals("0", Guests.value(server, "SERVER_RMMOD"), "the server unloaded nfsd and rpcrdma");
        Counters n0 = served.world.sim.counters().scope("node0"), n1 = served.world.sim.counters().scope("node1");
        System.out.println("--- node0: " + n0.snapshot() + "\n--- node1: " + n1.snapshot());
        // a WRITE's data goes by the server's RDMA READ of the client's MR, a READ's by the server's RDMA WRITE into
        // it: each adapter moves the file at least once each way by DMA, and the client's MRs are UMR layouts
        long bytes = (long) MIB << 20;
        for (Counters n : List.of(n0, n1))
            assertTrue(n.get("Firmware.dma_read_bytes") > bytes && n.get("Firmware.dma_write_bytes") > bytes,
                    "the adapters carried the file both ways: " + n.snapshot());
        assertTrue(n1.get("Firmware.umr_layouts") > 0, "xprtrdma registered its MRs by UMR: " + n1.snapshot());
        Guests.assertBothDriversClean(served);
    }
}
