/** A shape. */
export interface Shape { area(): number; }
export class Circle implements Shape {
  constructor(private r: number) {}
  /** Its area. */
  area(): number { return Math.PI * this.r ** 2; }
}
export function unit(): Circle { return new Circle(1); }
export const double = (x: number): number => x * 2;
namespace Geo { export function f() {} }
enum Color { Red, Green }
type P = { x: number };
