package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node's name and address reach that node's programs over ordinary TCP and UDP, as on a cluster, and never
 * leave the machine: node n is 127.77.0.(n+1), a loopback address (docs/attach.md, "Nodes are hosts").
 */
class NodesAreHostsTest {
    static Served served;

    @BeforeAll
    static void serve() throws Exception { served = new Served("nicsim-hosts").start(Served.cluster()); }

    @AfterAll
    static void stop() throws Exception { served.stop(); }

    @Test
    void aNodesAddressRoutesThroughLoopbackItsNameResolvesAndItsInterfaceShows() throws Exception {
        Programs.Run route = Programs.start(served, 0, false, "ip", "route", "get", RdmaCm.ipText(1));
        assertEquals(0, route.await(), route.output());
        assertTrue(route.output().matches("(?s)local 127\\.77\\.0\\.2 dev lo .*"), "node1's route:\n" + route.output());
        // the interfaces a program lists (getifaddrs) show its node's address first, as an IPoIB interface would
        Programs.Run own = Programs.start(served, 1, false, "hostname", "-I");
        assertEquals(0, own.await(), own.output());
        assertTrue(own.output().startsWith("127.77.0.2 "), "node 1's addresses: " + own.output());
        // and so do ioctl's address queries of ib0 (SIOCGIFADDR, SIOCGIFNETMASK), which dapl's socket CM makes
        Programs.Run ifreq = Programs.start(served, 1, false, "python3", "-c", String.join("\n",
                "import fcntl, socket, struct",
                "s = socket.socket()",
                "for q in (0x8915, 0x891b):",
                "    print(socket.inet_ntoa(fcntl.ioctl(s.fileno(), q, struct.pack('256s', b'ib0'))[20:24]))"));
        assertEquals(0, ifreq.await(), ifreq.output());
        assertEquals("127.77.0.2\n255.255.0.0\n", ifreq.output(), "node 1's ib0");
        Programs.Run names = Programs.start(served, 1, false, "getent", "hosts", "node0", "node1");
        assertEquals(0, names.await(), names.output());
        assertTrue(names.output().matches("(?s)127\\.77\\.0\\.1\\s+node0\\s+127\\.77\\.0\\.2\\s+node1\\s*"),
                names.output());
    }

    /**
     * A program on node 1 listening on 0.0.0.0 takes a TCP connection and a UDP datagram sent by name from a
     * program on node 0, and sees both come from node 0's address.
     */
    @Test
    void programsOnTwoNodesTalkTcpAndUdpByNodeName() throws Exception {
        int port = Programs.port() + 31;
        Path dir = Files.createTempDirectory("nicsim-hosts");
        Path server = dir.resolve("server.py"), client = dir.resolve("client.py");
        Files.writeString(server, String.join("\n",
                "import socket, sys",
                "port = int(sys.argv[1])",
                "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('0.0.0.0', port))",
                "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
                "s.bind(('0.0.0.0', port)); s.listen()",
                "c, peer = s.accept()",
                "print('tcp', c.recv(100).decode(), 'from', peer[0], flush=True)",
                "c.sendall(b'pong')",
                "data, peer = u.recvfrom(100)",
                "print('udp', data.decode(), 'from', peer[0], flush=True)", ""));
        Files.writeString(client, String.join("\n",
                "import socket, sys",
                "port = int(sys.argv[1])",
                "c = socket.create_connection(('node1', port))",
                "c.sendall(b'ping'); print('tcp answer', c.recv(100).decode(), 'via', c.getsockname()[0], flush=True)",
                "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'hello', ('node1', port))", ""));
        Programs.Run srv = Programs.start(served, 1, false, "python3", server.toString(), Integer.toString(port));
        Programs.awaitListening(srv, port);
        Programs.Run cli = Programs.start(served, 0, false, "python3", client.toString(), Integer.toString(port));
        assertEquals(0, cli.await(60), cli.output());
        assertEquals(0, srv.await(60), srv.output());
        assertTrue(cli.output().contains("tcp answer pong via 127.77.0.1"), cli.output());
        assertTrue(srv.output().contains("tcp ping from 127.77.0.1"), srv.output());
        assertTrue(srv.output().contains("udp hello from 127.77.0.1"), srv.output());
    }

    /** The pingpong's own out-of-band TCP by node name, then its RDMA between the two nodes' adapters. */
    @Test
    void aPingpongFindsItsPeerByNodeName() throws Exception {
        String port = Integer.toString(Programs.port() + 32);
        Programs.Run srv = Programs.start(served, 1, false, "ibv_rc_pingpong", "-n", "20", "-p", port);
        Programs.awaitListening(srv, Integer.parseInt(port));
        Programs.Run cli = Programs.start(served, 0, false, "ibv_rc_pingpong", "-n", "20", "-p", port, "node1");
        assertEquals(0, cli.await(), cli.output() + served.log());
        assertEquals(0, srv.await(), srv.output());
        assertTrue(cli.output().contains("20 iters"), cli.output());
    }
}
