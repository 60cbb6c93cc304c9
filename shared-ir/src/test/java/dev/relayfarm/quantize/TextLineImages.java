package dev.relayfarm.quantize;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.GraphicsEnvironment;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.util.Random;

/**
 * Seeded text-line images for PaddleOCR's direction classifier (ppocr_cls, input 1x3x48x192): a random string of
 * 5-12 letters, digits and spaces drawn dark on a light background with the JDK's fonts (sans or serif, 24-33 px, jittered),
 * upside down in about half of them, normalized as PaddleOCR does ({@code (v / 255 - 0.5) / 0.5}). The classifier is
 * confident on these (mean margin 0.95 between its two classes), where uniform noise leaves it at 0.5 ± 0.03 and any
 * rounding flips its top-1. There is no OCR data here, so this is the stand-in for text crops. The JDK's logical fonts
 * map to whatever fonts the machine has (DejaVu here), so the images, and the agreement measured on them, depend on it.
 */
public final class TextLineImages {
    public static final int HEIGHT = 48, WIDTH = 192;
    private static final String CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ";

    private TextLineImages() {}

    /** Whether this JDK can draw text here (headless, with at least one font installed). */
    public static boolean available() {
        try {
            System.setProperty("java.awt.headless", "true");
            return GraphicsEnvironment.getLocalGraphicsEnvironment().getAvailableFontFamilyNames().length > 0 && dark(render(new Random(1))) > 0;
        } catch (RuntimeException | Error e) { // no font configuration: AWT throws errors of its own
            return false;
        }
    }

    /** Image {@code seed} as a [1, 3, 48, 192] float32 tensor. */
    public static NDArray image(long seed) {
        BufferedImage im = render(new Random(seed));
        float[] v = new float[3 * HEIGHT * WIDTH];
        for (int c = 0; c < 3; c++) {
            for (int y = 0; y < HEIGHT; y++) {
                for (int x = 0; x < WIDTH; x++) {
                    int channel = (im.getRGB(x, y) >> (8 * (2 - c))) & 0xff;
                    v[(c * HEIGHT + y) * WIDTH + x] = (channel / 255f - 0.5f) / 0.5f;
                }
            }
        }
        return NDArray.wrap(DType.FLOAT32, new int[] {1, 3, HEIGHT, WIDTH}, v);
    }

    private static BufferedImage render(Random r) {
        BufferedImage im = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = im.createGraphics();
        int background = 200 + r.nextInt(56), ink = r.nextInt(80);
        g.setColor(new Color(background, background, background));
        g.fillRect(0, 0, WIDTH, HEIGHT);
        g.setColor(new Color(ink, ink, ink));
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setFont(new Font(r.nextBoolean() ? Font.SANS_SERIF : Font.SERIF, Font.PLAIN, 24 + r.nextInt(10)));
        StringBuilder text = new StringBuilder();
        for (int i = 5 + r.nextInt(8); i > 0; i--) text.append(CHARS.charAt(r.nextInt(CHARS.length())));
        if (r.nextBoolean()) g.rotate(Math.PI, WIDTH / 2.0, HEIGHT / 2.0);
        g.drawString(text.toString(), 2 + r.nextInt(10), 34 + r.nextInt(6));
        g.dispose();
        return im;
    }

    private static int dark(BufferedImage im) {
        int n = 0;
        for (int y = 0; y < HEIGHT; y++) for (int x = 0; x < WIDTH; x++) if ((im.getRGB(x, y) & 0xff) < 128) n++;
        return n;
    }
}
