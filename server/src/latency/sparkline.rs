//! ASCII sparklines, as Redis's sparkline.c draws LATENCY GRAPH: rows of `_o#` (and `|`
//! below a full cell) scaled between the sequence's minimum and maximum, then each sample's
//! label written downwards under its column.

/// The characters of one row's three steps, filled style.
const FILL: [u8; 3] = *b"_o#";
/// Rows between the graph and the labels.
const LABEL_MARGIN_TOP: usize = 1;

/// A sequence of samples, with their labels.
#[derive(Debug, Default)]
pub struct Sequence {
    samples: Vec<(f64, Option<String>)>,
    labels: usize,
    min: f64,
    max: f64,
}

impl Sequence {
    /// Adds a sample (an empty label is no label).
    pub fn add(&mut self, value: f64, label: &str) {
        if self.samples.is_empty() {
            self.min = value;
            self.max = value;
        } else if value < self.min {
            self.min = value;
        } else if value > self.max {
            self.max = value;
        }
        let label = (!label.is_empty()).then(|| label.to_owned());
        self.labels += usize::from(label.is_some());
        self.samples.push((value, label));
    }

    /// Appends the sparkline of `rows` rows, cut into blocks of `columns` samples (Redis's
    /// sparklineRender with SPARKLINE_FILL).
    pub fn render(&self, out: &mut String, columns: usize, rows: usize) {
        let mut j = 0;
        while j < self.samples.len() {
            let len = (self.samples.len() - j).min(columns);
            if j != 0 {
                out.push('\n');
            }
            self.render_range(out, rows, j, len);
            j += columns;
        }
    }

    /// One block: `len` samples from `offset` (sparklineRenderRange).
    fn render_range(&self, out: &mut String, rows: usize, offset: usize, len: usize) {
        let mut relmax = self.max - self.min;
        if relmax == 0.0 {
            relmax = 1.0;
        }
        let steps = (FILL.len() * rows) as i64;
        let mut row = 0usize;
        let mut chars = vec![b' '; len];
        let mut go_on = true;
        while go_on {
            go_on = false;
            chars.fill(b' ');
            for (j, c) in chars.iter_mut().enumerate() {
                let (value, label) = &self.samples[j + offset];
                let relval = value - self.min;
                // C's `(int) (relval*steps)/relmax`, truncated again into an int.
                let step = (((relval * steps as f64) as i64) as f64 / relmax) as i64;
                let step = step.clamp(0, steps - 1);
                if row < rows {
                    let charidx = step - ((rows - row - 1) * FILL.len()) as i64;
                    go_on = true;
                    if (0..FILL.len() as i64).contains(&charidx) {
                        *c = FILL[charidx as usize];
                    } else if charidx >= FILL.len() as i64 {
                        *c = b'|';
                    }
                } else {
                    if self.labels > 0 && row - rows < LABEL_MARGIN_TOP {
                        go_on = true;
                        break;
                    }
                    if let Some(label) = label {
                        let at = row - rows - LABEL_MARGIN_TOP;
                        if let Some(&b) = label.as_bytes().get(at) {
                            go_on = true;
                            *c = b;
                        }
                    }
                }
            }
            if go_on {
                row += 1;
                out.push_str(&String::from_utf8_lossy(&chars));
                out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_as_redis_draws_it() {
        let mut s = Sequence::default();
        s.add(1.0, "1s");
        let mut out = String::new();
        s.render(&mut out, 80, 4);
        assert_eq!(out, " \n \n \n_\n \n1\ns\n");
    }

    #[test]
    fn rising_samples_fill_the_rows() {
        let mut s = Sequence::default();
        for (v, l) in [(0.0, "a"), (6.0, ""), (11.0, "cc")] {
            s.add(v, l);
        }
        let mut out = String::new();
        s.render(&mut out, 80, 4);
        // steps = 12: 0 is step 0 ('_' in the last row); 6 is step 6 ('_' in the second
        // row, '|' under it); 11 is step 11 ('#' in the top row, '|' under it).
        assert_eq!(out, "  #\n _|\n ||\n_||\n   \na c\n  c\n");
        let mut out = String::new();
        s.render(&mut out, 2, 4);
        assert_eq!(out, "  \n _\n |\n_|\n  \na \n\n#\n|\n|\n|\n \nc\nc\n");
    }
}
