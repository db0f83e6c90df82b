import { InvalidArgumentError } from 'commander';
import { embargoDate, roleName, visibilityName } from '#cli/commands/visibilityOptions';

describe('embargo dates as bic takes them', () => {
  it('a day is its midnight UTC; an ISO time keeps its zone', () => {
    expect(embargoDate('2027-01-31')).toBe('2027-01-31T00:00:00.000Z');
    expect(embargoDate('2027-01-31T12:30:00Z')).toBe('2027-01-31T12:30:00.000Z');
    expect(embargoDate('2027-01-31T12:30:00+02:00')).toBe('2027-01-31T10:30:00.000Z');
    expect(embargoDate(' 2027-01-31T12:30Z ')).toBe('2027-01-31T12:30:00.000Z');
  });

  it('a time without a zone is local time', () => {
    expect(embargoDate('2027-01-31T12:30:00')).toBe(new Date(2027, 0, 31, 12, 30).toISOString());
  });

  it.each(['tomorrow', '31/01/2027', '2027-13-01', '2027-02-30x', '', '2027-01-31T25:00:00Z', '1700000000'])(
    'refuses %j',
    (raw) => {
      expect(() => embargoDate(raw)).toThrow(InvalidArgumentError);
    },
  );

  it('visibility and role names are the contract’s only', () => {
    expect(visibilityName('embargoed')).toBe('embargoed');
    expect(() => visibilityName('Public')).toThrow(InvalidArgumentError);
    expect(roleName('editor')).toBe('editor');
    expect(() => roleName('owner')).toThrow(InvalidArgumentError);
  });
});
