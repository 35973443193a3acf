/** Money typed into the fee forms (format.ts parseUsdCents): a comma is never a decimal point. */
import { describe, expect, it } from 'vitest';
import { numberInput, parseUsdCents } from './format';

describe('parseUsdCents', () => {
  it('reads dollars, cents and thousands separators', () => {
    expect(parseUsdCents('60')).toBe(6000);
    expect(parseUsdCents('61.5')).toBe(6150);
    expect(parseUsdCents(' $61.50 ')).toBe(6150);
    expect(parseUsdCents('1,234.05')).toBe(123405);
    expect(parseUsdCents('10,000')).toBe(1000000);
    expect(parseUsdCents('0.07')).toBe(7);
  });

  it('refuses a comma-decimal entry instead of reading it as 100 times the amount', () => {
    expect(parseUsdCents('61,50')).toBeNaN();
    expect(parseUsdCents('41,5')).toBeNaN();
    expect(parseUsdCents('1,23')).toBeNaN();
    expect(parseUsdCents('1234,567')).toBeNaN();
  });

  it('refuses a space inside the number (never "45 50" as $4,550.00) and a leading-zero thousands group', () => {
    for (const s of ['45 50', '4 550', '1, 234.50', '61 .50', '0,095', '00,100', '$']) expect(parseUsdCents(s), s).toBeNaN();
    expect(parseUsdCents('$ 45.50')).toBe(4550);
  });

  it('refuses other non-prices and reads an empty entry as none', () => {
    for (const s of ['abc', '1.234', '-5', '1e3', '1.2.3', ',100', '100,']) expect(parseUsdCents(s), s).toBeNaN();
    expect(parseUsdCents('')).toBeUndefined();
    expect(parseUsdCents('  ')).toBeUndefined();
  });
});

describe('numberInput', () => {
  it('reads plain decimals and passes anything else through as text for the service to refuse (never "7,5" as 75)', () => {
    expect(numberInput('7.5')).toBe(7.5);
    expect(numberInput(' 60 ')).toBe(60);
    expect(numberInput('−3')).toBe(-3);
    expect(numberInput('-0.5')).toBe(-0.5);
    expect(numberInput('')).toBeUndefined();
    for (const s of ['7,5', '1 000', '1e3', 'abc', '1.2.3', '--1']) expect(numberInput(s), s).toBe(s);
  });
});
