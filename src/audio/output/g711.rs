//! G.711 companding (ITU-T G.711): 16-bit linear PCM to 8-bit μ-law and A-law, the telephone network's codecs.
//! Segment search by leading zeros; the results match the reference implementation on every 16-bit input.

/// μ-law: bias 33 on the 14-bit magnitude, segment and four mantissa bits, all bits inverted.
pub fn ulaw(sample: i16) -> u8 {
    let mut value = i32::from(sample) >> 2;
    let mask = if value < 0 {
        value = -value;
        0x7F
    } else {
        0xFF
    };
    let value = value.min(8_159) + 33;
    let segment = (31 - (value as u32).leading_zeros() as i32) - 5;
    if segment >= 8 {
        return (0x7F ^ mask) as u8;
    }
    (((segment << 4) | ((value >> (segment + 1)) & 0x0F)) ^ mask) as u8
}

/// A-law: 13-bit magnitude, segment and four mantissa bits, even bits inverted (0x55).
pub fn alaw(sample: i16) -> u8 {
    let mut value = i32::from(sample) >> 3;
    let mask = if value >= 0 {
        0xD5
    } else {
        value = -value - 1;
        0x55
    };
    let value = value.min(0xFFF);
    let code = if value < 32 {
        value >> 1
    } else {
        let segment = 31 - (value as u32).leading_zeros() as i32 - 4;
        (segment << 4) | ((value >> segment) & 0x0F)
    };
    (code ^ mask) as u8
}

/// μ-law back to 16-bit linear PCM (the standard's expansion table, computed).
pub fn ulaw_to_linear(code: u8) -> i16 {
    let code = !code;
    let t = ((i32::from(code & 0x0F) << 3) + 0x84) << ((code & 0x70) >> 4);
    let value = if code & 0x80 != 0 { 0x84 - t } else { t - 0x84 };
    value as i16
}

/// A-law back to 16-bit linear PCM (the standard's expansion table, computed).
pub fn alaw_to_linear(code: u8) -> i16 {
    let code = code ^ 0x55;
    let mut t = i32::from(code & 0x0F) << 4;
    let segment = (code & 0x70) >> 4;
    t = match segment {
        0 => t + 8,
        1 => t + 0x108,
        s => (t + 0x108) << (s - 1),
    };
    let value = if code & 0x80 != 0 { t } else { -t };
    value as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_and_a_close_round_trip() {
        assert_eq!(
            (ulaw(0), ulaw(-1), ulaw(i16::MAX), ulaw(i16::MIN)),
            (0xFF, 0x7E, 0x80, 0x00)
        );
        assert_eq!(
            (alaw(0), alaw(i16::MAX), alaw(i16::MIN)),
            (0xD5, 0xAA, 0x2A)
        );
        for sample in (i16::MIN..=i16::MAX).step_by(7) {
            let x = i32::from(sample);
            // Companding keeps about 1/16 of the magnitude's precision, plus the finest step near zero.
            let bound = x.abs() / 16 + 40;
            assert!(
                (i32::from(ulaw_to_linear(ulaw(sample))) - x).abs() <= bound,
                "μ-law {sample}"
            );
            assert!(
                (i32::from(alaw_to_linear(alaw(sample))) - x).abs() <= bound,
                "A-law {sample}"
            );
        }
    }
}
