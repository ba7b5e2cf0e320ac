package dev.devicebridge.snapshothelper.core;

import java.util.ArrayList;
import java.util.List;

/** A mutable node for tests and fixture trees. */
public final class FakeNode implements NodeView {
    public String className = "android.widget.FrameLayout";
    public String packageName = "com.example";
    public String text;
    public String resourceId;
    public String contentDesc;
    public String hint;
    public boolean checkable;
    public boolean checked;
    public boolean clickable;
    public boolean enabled = true;
    public boolean focusable;
    public boolean focused;
    public boolean scrollable;
    public boolean longClickable;
    public boolean password;
    public boolean selected;
    public boolean visibleToUser = true;
    public int drawingOrder = NO_DRAWING_ORDER;
    public Rect bounds = new Rect(0, 0, 100, 100);
    /** null entries model a child the platform no longer returns. */
    public final List<FakeNode> children = new ArrayList<FakeNode>();

    public FakeNode() {}

    public FakeNode(String className, Rect bounds) {
        this.className = className;
        this.bounds = bounds;
    }

    public FakeNode add(FakeNode child) {
        children.add(child);
        return this;
    }

    /** A chain of {@code depth} nested nodes under this one; returns the deepest. */
    public FakeNode chain(int depth) {
        FakeNode at = this;
        for (int i = 0; i < depth; i++) {
            FakeNode next = new FakeNode();
            at.add(next);
            at = next;
        }
        return at;
    }

    @Override public String className() { return className; }
    @Override public String packageName() { return packageName; }
    @Override public String text() { return text; }
    @Override public String resourceId() { return resourceId; }
    @Override public String contentDesc() { return contentDesc; }
    @Override public String hint() { return hint; }
    @Override public boolean checkable() { return checkable; }
    @Override public boolean checked() { return checked; }
    @Override public boolean clickable() { return clickable; }
    @Override public boolean enabled() { return enabled; }
    @Override public boolean focusable() { return focusable; }
    @Override public boolean focused() { return focused; }
    @Override public boolean scrollable() { return scrollable; }
    @Override public boolean longClickable() { return longClickable; }
    @Override public boolean password() { return password; }
    @Override public boolean selected() { return selected; }
    @Override public boolean visibleToUser() { return visibleToUser; }
    @Override public int drawingOrder() { return drawingOrder; }
    @Override public Rect bounds() { return bounds; }
    @Override public int childCount() { return children.size(); }
    @Override public NodeView child(int index) { return children.get(index); }
}
