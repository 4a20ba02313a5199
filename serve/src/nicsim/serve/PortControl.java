package nicsim.serve;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The fabric's operator's side of serve (nicsim port): a node's link taken down or brought up, as a cable pulled
 * and plugged back, through a PORT_LINK request on serve's socket. serve does it at the simulated time it takes the
 * request; the node's adapter then reports PORT_ERR or PORT_ACTIVE to its drivers.
 */
public final class PortControl {
    private PortControl() {}

    /**
     * Node {@code node}'s link on the serve at {@code socket} goes up or down. IOException when no serve answers
     * there; VerbsException with serve's errno when it refuses (ENODEV: no such node).
     */
    public static void link(Path socket, int node, boolean up) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            ByteBuffer q = Wire.request(Wire.Op.PORT_LINK, new WireLayout.PortLinkRequest(node, up ? 1 : 0));
            while (q.hasRemaining()) ch.write(q);
            ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            while (head.hasRemaining()) if (ch.read(head) < 0) throw new IOException("serve at " + socket
                    + " closed the connection before answering PORT_LINK");
            int status = head.getInt(4);
            if (status == Errno.ENODEV) throw new VerbsException(status, "node " + node + " is not one of the "
                    + "nodes the serve at " + socket + " runs");
            if (status != 0) throw new VerbsException(status, "serve at " + socket + " refused PORT_LINK for node "
                    + node + " (errno " + status + "; its log says why)");
        }
    }
}
