package nicsim.verbs;

import java.util.ArrayList;
import java.util.List;

/**
 * What every verbs object shares: it belongs to a parent, owns children, and closing it closes
 * its children first (children in reverse order of creation), then destroys it in the adapter.
 * A call on a closed object throws {@link VerbsException} (EINVAL) naming the object.
 *
 * <p>An object joins its parent only once the adapter has made it ({@link #made}, the last step of
 * every constructor): a create the checks or the adapter refuse leaves nothing behind to destroy.
 */
public abstract class VerbsObject implements AutoCloseable {
    private VerbsObject parent;
    private final List<VerbsObject> children = new ArrayList<>();
    private boolean closed;

    protected VerbsObject(VerbsObject parent) { this.parent = parent; }

    /** This object now belongs to {@code newParent} (a region moved to another PD), and closes with it. */
    protected final void reparent(VerbsObject newParent) {
        if (parent != null) parent.children.remove(this);
        parent = newParent;
        parent.children.add(this);
    }

    /** The object exists in the adapter: from now on it is its parent's child, closed with it. */
    protected final void made() {
        if (parent != null) parent.children.add(this);
    }

    /**
     * Whether objects made under this one are still open. The kernel refuses to destroy such an
     * object (a PD with an MR, say: EBUSY); closing it from Java closes them first.
     */
    public boolean hasChildren() { return !children.isEmpty(); }

    /** Closes the children of type {@code type}, newest first. */
    protected final void closeChildren(Class<? extends VerbsObject> type) {
        for (int i = children.size() - 1; i >= 0; i--) if (type.isInstance(children.get(i))) children.get(i).close();
    }

    /** Whether close() has run. */
    public boolean isClosed() { return closed; }

    protected void checkOpen() {
        if (closed) throw new VerbsException(Errno.EINVAL, describe() + " is closed");
    }

    protected abstract String describe();

    /** Destroys this object in the adapter (children are already gone). */
    protected abstract void destroy();

    @Override public void close() {
        if (closed) return;
        for (int i = children.size() - 1; i >= 0; i--) children.get(i).close();
        destroy();
        closed = true;
        if (parent != null) parent.children.remove(this);
    }
}
