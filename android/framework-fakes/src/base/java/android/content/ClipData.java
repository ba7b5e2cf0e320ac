/* Fake of frameworks/base/core/java/android/content/ClipData.java @ android-14.0.0_r1: plain-text clips. */
package android.content;

import java.util.ArrayList;
import java.util.List;

public class ClipData {
    public static class Item {
        private final CharSequence text;

        public Item(CharSequence text) {
            this.text = text;
        }

        public CharSequence getText() {
            return text;
        }

        @Override
        public String toString() {
            return "ClipData.Item { T:" + text + " }";
        }
    }

    private final CharSequence label;
    private final List<Item> items = new ArrayList<Item>();

    public ClipData(CharSequence label, String[] mimeTypes, Item item) {
        this.label = label;
        if (item == null) throw new NullPointerException("item is null");
        items.add(item);
    }

    public static ClipData newPlainText(CharSequence label, CharSequence text) {
        return new ClipData(label, new String[] {"text/plain"}, new Item(text));
    }

    public int getItemCount() {
        return items.size();
    }

    public Item getItemAt(int index) {
        return items.get(index);
    }

    public CharSequence getLabel() {
        return label;
    }
}
