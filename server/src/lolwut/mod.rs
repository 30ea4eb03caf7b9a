//! LOLWUT's computer art, as Redis draws it: a canvas of pixels with Bresenham lines and
//! rotated squares (Redis's lolwut.c), Georg Nees's "Schotter" rendered in Braille
//! characters for version 5 ([`schotter`]), a city skyline in the terminal's four grays
//! for version 6 ([`skyline`]), and C's `rand()` as glibc computes it ([`Rand`]), which
//! both draw their randomness from. No I/O: the command (`commands::lolwut`) replies
//! with the text.

pub mod schotter;
pub mod skyline;

/// A canvas of `width` x `height` pixels, each a color (0 or 1 for Schotter, 0 to 3 for
/// the skyline); drawing outside it is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canvas {
    /// Pixels per row.
    pub width: i32,
    /// Rows.
    pub height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with `background` (lwCreateCanvas).
    pub fn new(width: i32, height: i32, background: u8) -> Canvas {
        let (w, h) = (width.max(0) as usize, height.max(0) as usize);
        Canvas {
            width,
            height,
            pixels: vec![background; w * h],
        }
    }

    /// Sets a pixel (lwDrawPixel); outside the canvas, nothing.
    pub fn draw_pixel(&mut self, x: i32, y: i32, color: u8) {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return;
        }
        self.pixels[(x + y * self.width) as usize] = color;
    }

    /// A pixel's color, 0 outside the canvas (lwGetPixel).
    pub fn pixel(&self, x: i32, y: i32) -> u8 {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return 0;
        }
        self.pixels[(x + y * self.width) as usize]
    }

    /// A line from (x1, y1) to (x2, y2), Bresenham's way (lwDrawLine).
    pub fn draw_line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32, color: u8) {
        let dx = (x2 - x1).abs();
        let dy = (y2 - y1).abs();
        let sx = if x1 < x2 { 1 } else { -1 };
        let sy = if y1 < y2 { 1 } else { -1 };
        let mut err = dx - dy;
        loop {
            self.draw_pixel(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// A square of side `size` centered on (x, y), rotated by `angle` radians
    /// (lwDrawSquare, with C's float and double steps).
    pub fn draw_square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        let size = ((size as f64 / SQRT_2_AS_REDIS_WRITES_IT) as f32 as f64).round() as f32;
        let mut k = (std::f64::consts::FRAC_PI_4 + angle as f64) as f32;
        let mut px = [0i32; 4];
        let mut py = [0i32; 4];
        for j in 0..4 {
            px[j] = ((k as f64).sin() * size as f64 + x as f64).round() as i32;
            py[j] = ((k as f64).cos() * size as f64 + y as f64).round() as i32;
            k = (k as f64 + std::f64::consts::FRAC_PI_2) as f32;
        }
        for j in 0..4 {
            self.draw_line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
        }
    }
}

/// The square root of two as lolwut.c writes it (ten decimals): the exact constant would
/// round some squares differently.
#[allow(clippy::approx_constant)]
const SQRT_2_AS_REDIS_WRITES_IT: f64 = 1.4142135623;

/// C's `rand()` as glibc computes it (random_r's additive feedback generator, degree 31),
/// so that a seed gives glibc's sequence.
#[derive(Debug, Clone)]
pub struct Rand {
    state: [i32; 31],
    front: usize,
    rear: usize,
}

/// The largest value [`Rand::rand`] returns (RAND_MAX).
pub const RAND_MAX: i32 = i32::MAX;

impl Rand {
    /// glibc's srand(seed).
    pub fn new(seed: u32) -> Rand {
        let mut state = [0i32; 31];
        state[0] = if seed == 0 { 1 } else { seed as i32 };
        for i in 1..31 {
            // 16807 * state[i - 1] % 2147483647 without overflow (Schrage's method).
            let word = state[i - 1] as i64;
            let hi = word / 127_773;
            let lo = word % 127_773;
            let mut next = 16_807 * lo - 2_836 * hi;
            if next < 0 {
                next += 2_147_483_647;
            }
            state[i] = next as i32;
        }
        let mut rand = Rand {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            rand.rand();
        }
        rand
    }

    /// The next value, 0 to [`RAND_MAX`] (C's rand()).
    pub fn rand(&mut self) -> i32 {
        let sum = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = sum;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        ((sum as u32) >> 1) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn glibc_sequences() {
        let mut r = Rand::new(1);
        assert_eq!(
            [r.rand(), r.rand(), r.rand()],
            [1_804_289_383, 846_930_886, 1_681_692_777]
        );
        let mut r = Rand::new(42);
        assert_eq!(r.rand(), 71_876_166);
    }

    #[test]
    fn lines_and_squares() {
        let mut c = Canvas::new(5, 3, 0);
        c.draw_line(0, 0, 4, 2, 1);
        let lit: Vec<(i32, i32)> = (0..3)
            .flat_map(|y| (0..5).map(move |x| (x, y)))
            .filter(|&(x, y)| c.pixel(x, y) == 1)
            .collect();
        assert_eq!(lit, vec![(0, 0), (1, 0), (2, 1), (3, 1), (4, 2)]);
        assert_eq!(c.pixel(-1, 0), 0);
        let mut c = Canvas::new(8, 8, 0);
        c.draw_square(4, 4, 4.0, 0.0, 1);
        // An unrotated square of side 4 has corners 2 (rounded 2.83 / 1.41) from the center.
        for (x, y) in [(2, 2), (6, 2), (2, 6), (6, 6)] {
            assert_eq!(c.pixel(x, y), 1, "{x},{y}");
        }
        assert_eq!(c.pixel(4, 4), 0);
    }

    proptest! {
        #[test]
        fn drawing_never_leaves_the_canvas(w in 0i32..40, h in 0i32..40,
                                           x1 in -50i32..50, y1 in -50i32..50,
                                           x2 in -50i32..50, y2 in -50i32..50,
                                           size in 0f32..60.0, angle in -4f32..4.0) {
            let mut c = Canvas::new(w, h, 2);
            c.draw_line(x1, y1, x2, y2, 1);
            c.draw_square(x1, y1, size, angle, 3);
            prop_assert_eq!(c.pixels.len(), (w * h) as usize);
            prop_assert!(c.pixels.iter().all(|&p| p <= 3));
        }
    }
}
