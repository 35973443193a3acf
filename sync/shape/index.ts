/** Electric-compatible shape service: embed with `createShapeApp(await ShapeService.start(…))`, or run `startShapeServer`. */
export { createShapeApp, type ShapeAppOptions } from './http';
export { startShapeServer, type ShapeServer, type ShapeServerOptions } from './server';
export { ShapeService, ShapeServiceError, type ShapeServiceOptions, type ShapeRequest } from './service';
export { WhereError } from './where';
export { TableError } from './schema';
