//! Interleaved geohashes as Redis's geohash.c computes them: a point is a cell of a
//! 2^step x 2^step grid over a longitude and a latitude range, its number the cell's
//! latitude and longitude indexes interleaved (latitude in the even bits, longitude in the
//! odd ones). At step 26 the 52-bit number is the sorted-set score of a geo member.

/// The longitude range Redis indexes (GEO_LONG_MIN / GEO_LONG_MAX).
pub const LONG_RANGE: Range = Range {
    min: -180.0,
    max: 180.0,
};
/// The latitude range Redis indexes (GEO_LAT_MIN / GEO_LAT_MAX, the Web Mercator limits).
pub const LAT_RANGE: Range = Range {
    min: -85.05112878,
    max: 85.05112878,
};
/// The latitude range of the standard geohash strings GEOHASH prints.
pub const STANDARD_LAT_RANGE: Range = Range {
    min: -90.0,
    max: 90.0,
};
/// The precision of stored scores (GEO_STEP_MAX): 26 bits per coordinate.
pub const STEP_MAX: u8 = 26;

/// A closed coordinate interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lower end.
    pub min: f64,
    /// Upper end.
    pub max: f64,
}

/// A cell: its interleaved number and the bits per coordinate. The zero value (bits 0,
/// step 0) is Redis's "no cell", a neighbour a search leaves out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hash {
    /// The interleaved cell number, `2 * step` bits.
    pub bits: u64,
    /// Bits per coordinate.
    pub step: u8,
}

/// The area a cell covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// Its longitudes.
    pub longitude: Range,
    /// Its latitudes.
    pub latitude: Range,
}

impl Hash {
    /// Whether this is the "no cell" value.
    pub fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The number left-aligned to 52 bits (geohashAlign52Bits): the score of the cell's
    /// first point.
    pub fn align52(&self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }

    /// The sorted-set scores `[min, max)` of every point inside the cell
    /// (scoresOfGeoHashBox).
    pub fn score_range(&self) -> (f64, f64) {
        let next = Hash {
            bits: self.bits + 1,
            step: self.step,
        };
        (self.align52() as f64, next.align52() as f64)
    }
}

/// Spreads the 32 bits of `v` to the even bit positions of a u64.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gathers the even bits of `x` into a u32 (the inverse of [`spread`]).
fn gather(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((x | (x >> 16)) & 0x0000_0000_FFFF_FFFF) as u32
}

/// The cell of `(longitude, latitude)` at `step` over the given ranges (geohashEncode):
/// None outside Redis's limits or the ranges, or for a step outside 1..=32.
pub fn encode(long_range: Range, lat_range: Range, lon: f64, lat: f64, step: u8) -> Option<Hash> {
    if step == 0 || step > 32 {
        return None;
    }
    let outside = |r: Range, v: f64| v < r.min || v > r.max;
    if outside(LONG_RANGE, lon) || outside(LAT_RANGE, lat) {
        return None;
    }
    if outside(lat_range, lat) || outside(long_range, lon) {
        return None;
    }
    let scale = (1u64 << step) as f64;
    // Truncating casts, as C's double to uint32_t conversion.
    let lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min) * scale;
    let long_offset = (lon - long_range.min) / (long_range.max - long_range.min) * scale;
    Some(Hash {
        bits: spread(lat_offset as u32) | (spread(long_offset as u32) << 1),
        step,
    })
}

/// The cell of a point over Redis's ranges (geohashEncodeWGS84).
pub fn encode_wgs84(lon: f64, lat: f64, step: u8) -> Option<Hash> {
    encode(LONG_RANGE, LAT_RANGE, lon, lat, step)
}

/// The area cell `hash` covers over Redis's ranges (geohashDecode).
pub fn decode(hash: Hash) -> Area {
    let lat_index = gather(hash.bits);
    let long_index = gather(hash.bits >> 1);
    let cells = (1u64 << hash.step) as f64;
    let side = |r: Range, i: u32| Range {
        min: r.min + (f64::from(i) / cells) * (r.max - r.min),
        // C adds 1 in 32-bit unsigned arithmetic.
        max: r.min + (f64::from(i.wrapping_add(1)) / cells) * (r.max - r.min),
    };
    Area {
        longitude: side(LONG_RANGE, long_index),
        latitude: side(LAT_RANGE, lat_index),
    }
}

/// The centre of a cell, clamped to Redis's limits: `[longitude, latitude]`
/// (geohashDecodeAreaToLongLat).
pub fn center(area: &Area) -> [f64; 2] {
    let clamp = |v: f64, r: Range| v.clamp(r.min, r.max);
    [
        clamp((area.longitude.min + area.longitude.max) / 2.0, LONG_RANGE),
        clamp((area.latitude.min + area.latitude.max) / 2.0, LAT_RANGE),
    ]
}

/// The coordinates a geo member's score stands for (Redis's decodeGeohash): the score is
/// cast to an integer as C casts it and read as a step-26 cell.
pub fn decode_score(score: f64) -> [f64; 2] {
    center(&decode(Hash {
        bits: score as u64,
        step: STEP_MAX,
    }))
}

/// The score GEOADD stores for a point within Redis's limits.
pub fn score_of(lon: f64, lat: f64) -> Option<f64> {
    encode_wgs84(lon, lat, STEP_MAX).map(|h| h.align52() as f64)
}

/// The 11-character standard geohash GEOHASH prints for a score: the decoded point
/// re-encoded over latitudes -90..90, five bits per character, the eleventh always '0'
/// (52 bits fill only ten and two bits).
pub fn standard_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let [lon, lat] = decode_score(score);
    let bits = encode(LONG_RANGE, STANDARD_LAT_RANGE, lon, lat, STEP_MAX).map_or(0, |h| h.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

/// The eight cells around one, by compass direction (GeoHashNeighbors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Neighbors {
    /// North.
    pub north: Hash,
    /// East.
    pub east: Hash,
    /// West.
    pub west: Hash,
    /// South.
    pub south: Hash,
    /// North-east.
    pub north_east: Hash,
    /// South-east.
    pub south_east: Hash,
    /// North-west.
    pub north_west: Hash,
    /// South-west.
    pub south_west: Hash,
}

/// `hash` moved `d` cells (-1, 0 or 1) along the coordinate in the bits of `mask` (odd bits
/// for longitude, even for latitude), wrapping around its range (geohash_move_x/_y).
///
/// Filling the other coordinate's bits with ones makes the carry or borrow of the add or
/// subtract ripple across them to the next bit of this coordinate.
fn moved(hash: Hash, d: i8, mask: u64) -> Hash {
    if d == 0 {
        return hash;
    }
    let shift = 64 - u32::from(hash.step) * 2;
    let mine = hash.bits & mask;
    let other = hash.bits & !mask;
    let filler = !mask >> shift;
    let stepped = if d > 0 {
        mine.wrapping_add(filler + 1)
    } else {
        (mine | filler).wrapping_sub(filler + 1)
    };
    Hash {
        bits: (stepped & (mask >> shift)) | other,
        step: hash.step,
    }
}

const LONG_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
const LAT_BITS: u64 = 0x5555_5555_5555_5555;

/// The cell `dx` cells east and `dy` cells north of `hash`.
fn shifted(hash: Hash, dx: i8, dy: i8) -> Hash {
    moved(moved(hash, dx, LONG_BITS), dy, LAT_BITS)
}

/// The eight neighbours of a cell (geohashNeighbors).
pub fn neighbors(hash: Hash) -> Neighbors {
    Neighbors {
        north: shifted(hash, 0, 1),
        east: shifted(hash, 1, 0),
        west: shifted(hash, -1, 0),
        south: shifted(hash, 0, -1),
        north_east: shifted(hash, 1, 1),
        south_east: shifted(hash, 1, -1),
        north_west: shifted(hash, -1, 1),
        south_west: shifted(hash, -1, -1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Scores and strings from Redis 7.0: GEOADD k 13.361389 38.115556 Palermo
    // 15.087269 37.502669 Catania, then ZSCORE and GEOHASH.
    #[test]
    fn scores_and_strings_match_redis() {
        assert_eq!(score_of(13.361389, 38.115556), Some(3479099956230698.0));
        assert_eq!(score_of(15.087269, 37.502669), Some(3479447370796909.0));
        assert_eq!(&standard_string(3479099956230698.0), b"sqc8b49rny0");
        assert_eq!(&standard_string(3479447370796909.0), b"sqdtr74hyu0");
        assert_eq!(score_of(180.1, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
    }

    #[test]
    fn decoded_coordinates_match_redis() {
        // GEOPOS Palermo in Redis: 13.36138933897018433 38.11555639549629859.
        let [lon, lat] = decode_score(3479099956230698.0);
        assert_eq!(format!("{lon:.17}"), "13.36138933897018433");
        assert_eq!(format!("{lat:.17}"), "38.11555639549629859");
    }

    #[test]
    fn neighbours_wrap_around_the_antimeridian() {
        let h = encode_wgs84(179.99, 0.0, 4).expect("in range");
        let east = decode(neighbors(h).east);
        assert_eq!(east.longitude.min, -180.0);
    }

    proptest! {
        #[test]
        fn decode_contains_encode(lon in -180.0f64..180.0, lat in -85.05112878f64..85.05112878,
                                  step in 1u8..=26) {
            let h = encode_wgs84(lon, lat, step).expect("in range");
            let a = decode(h);
            prop_assert!(a.longitude.min <= lon && lon <= a.longitude.max);
            prop_assert!(a.latitude.min <= lat && lat <= a.latitude.max);
            let [clon, clat] = decode_score(score_of(lon, lat).expect("in range"));
            prop_assert!((clon - lon).abs() < 1e-5 && (clat - lat).abs() < 1e-5);
        }

        #[test]
        fn neighbours_are_adjacent(lon in -179.0f64..179.0, lat in -84.0f64..84.0, step in 2u8..=26) {
            let h = encode_wgs84(lon, lat, step).expect("in range");
            let a = decode(h);
            prop_assume!(a.latitude.min > LAT_RANGE.min && a.latitude.max < LAT_RANGE.max);
            prop_assume!(a.longitude.min > LONG_RANGE.min && a.longitude.max < LONG_RANGE.max);
            let n = neighbors(h);
            let (north, east) = (decode(n.north), decode(n.east));
            let (south, west) = (decode(n.south), decode(n.west));
            let eps = 1e-9;
            prop_assert!((north.latitude.min - a.latitude.max).abs() < eps);
            prop_assert!((south.latitude.max - a.latitude.min).abs() < eps);
            prop_assert!((east.longitude.min - a.longitude.max).abs() < eps);
            prop_assert!((west.longitude.max - a.longitude.min).abs() < eps);
            prop_assert_eq!(north.longitude, a.longitude);
            prop_assert_eq!(east.latitude, a.latitude);
            let ne = decode(n.north_east);
            prop_assert_eq!(ne.latitude, north.latitude);
            prop_assert_eq!(ne.longitude, east.longitude);
        }
    }
}
