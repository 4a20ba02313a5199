package nicsim.firmware;

import java.util.List;
import nicsim.abi.Cqe64;
import nicsim.adapter.MttPorts.XlateRsp;

/** An inbound SEND or WRITE spanning packets. */
final class InMsg {
    final boolean send;
    RecvRingReader.Wqe wqe;
    /**
     * On a tag-matching SRQ: what the message is (Cqe64.TM_*: matched, NO_TAG, unexpected), its tag and app context.
     */
    int tmKind;
    long tag;
    int priv;
    long offset;
    List<XlateRsp> target; // WRITE: the translated remote range
    long dmaLength;

    InMsg(boolean send) { this.send = send; }
}
