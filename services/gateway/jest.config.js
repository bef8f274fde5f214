const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: require('./package.json').name,
  // oidc-provider is an ES module, loaded with import(): swc keeps it an import rather than a
  // require, which cannot load an ES module under jest.
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs', ignoreDynamic: true } }],
  },
};
